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

    /// `../shared/real-stores`, or nil when it is absent. Never open its stores in place: copy them
    /// (with their `-wal` and `-shm`) with `copyRealStore` first.
    public static var realStores: String? { shared.flatMap { existingDirectory($0 + "/real-stores") } }

    /// Copies a real store's folder (`swiftdata-resourcesmanager`) to a new temporary directory, files
    /// made writable, and returns the copy's path: a read-write open of the original would empty its `-wal`.
    public static func copyRealStore(_ folder: String) throws -> String {
        let target = FileManager.default.temporaryDirectory.appendingPathComponent("tripconv-real-\(UUID().uuidString)").path
        try FileManager.default.copyItem(atPath: realStores! + "/" + folder, toPath: target)
        let files = FileManager.default.enumerator(atPath: target)?.allObjects.compactMap { $0 as? String } ?? []
        for f in [""] + files { try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: target + "/" + f) }
        return target
    }

    private static func existingDirectory(_ path: String) -> String? {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue ? path : nil
    }
}
