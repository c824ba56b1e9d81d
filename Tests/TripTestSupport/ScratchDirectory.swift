import Foundation

/// A fresh temporary directory for one test's files, removed when released.
public final class ScratchDirectory {
    public let path: String

    public init() {
        var template = Array((NSTemporaryDirectory() + "/tripconv-test-XXXXXX").utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(made != nil, "cannot make a scratch directory")
        path = String(cString: made!)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// The path of a file in the directory.
    public func path(_ name: String) -> String { path + "/" + name }

    /// Writes a file; returns its path.
    @discardableResult
    public func file(_ name: String, _ bytes: [UInt8]) -> String {
        let p = path(name)
        let created = FileManager.default.createFile(atPath: p, contents: Data(bytes))
        precondition(created, "cannot create \(p)")
        return p
    }

    @discardableResult
    public func file(_ name: String, _ text: String) -> String { file(name, Array(text.utf8)) }

    /// A file's text, or nil when it is absent.
    public func contents(_ name: String) -> String? {
        FileManager.default.contents(atPath: path(name)).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The names in the directory, hidden ones included (a temporary store is `.NAME.tripconv-XXXXXX`).
    public func names() -> [String] { (try? FileManager.default.contentsOfDirectory(atPath: path))?.sorted() ?? [] }

    /// A copy of a file of the repository's samples/ directory; returns its path.
    public func copySample(_ name: String) throws -> String {
        let target = path(name)
        try FileManager.default.copyItem(atPath: TestPaths.samples + "/" + name, toPath: target)
        return target
    }
}
