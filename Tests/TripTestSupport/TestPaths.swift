import Foundation

/// Where the tests' material is: the package root (from this file's path), samples/, and `../shared`.
public enum TestPaths {
    /// The package root.
    public static let root: URL = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url
    }()

    public static var packageRoot: String { root.path }

    /// The repository's samples/ directory.
    public static var samples: String { root.appendingPathComponent("samples").path }

    /// `../shared` beside the package, or nil when it is absent (tests that need it skip, saying so).
    public static var shared: String? { existingDirectory(root.deletingLastPathComponent().appendingPathComponent("shared").path) }

    /// `../shared/conformance`, or nil when it is absent.
    public static var conformance: String? { shared.flatMap { existingDirectory($0 + "/conformance") } }

    private static func existingDirectory(_ path: String) -> String? {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue ? path : nil
    }
}
