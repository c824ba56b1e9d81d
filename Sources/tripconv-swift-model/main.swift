#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import TripFormats
import TripKit
import TripSwiftModel

// tripconv-swift-model PATH...: an app's model and migration plan, read from its Swift source, as the
// plan JSON `tripconv --model plan.json` reads (ObjectModelJSON). tripconv runs it for `--model` of Swift
// source, so that swift-syntax is loaded only by runs that read Swift (docs/DESIGN-NOTES.md, "A model
// and plan read from Swift source"). Exit status: 0, the plan on standard output; 65, a declaration it
// cannot read (its place first, on standard error); 66, a path that cannot be read; 64, no path.

func fail(_ message: String, _ status: Int32) -> Never {
    writeAll(2, "tripconv-swift-model: \(message)\n")
    exit(status)
}

func writeAll(_ fd: Int32, _ text: String) {
    var bytes = Array(text.utf8)[...]
    while !bytes.isEmpty {
        let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        if n <= 0 { return }
        bytes = bytes.dropFirst(n)
    }
}

let paths = Array(CommandLine.arguments.dropFirst())
if paths.isEmpty || paths.contains(where: { $0.hasPrefix("-") }) {
    fail("usage: tripconv-swift-model PATH...  (Swift files, or folders of them)", 64)
}
do {
    let plan = try SwiftModelSource.read(paths, readFile: { path in
        let input = try ByteInput(InputLocation(path))
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = try chunk.withUnsafeMutableBytes { try input.read(into: $0) }
            if n == 0 { break }
            bytes += chunk[0..<n]
        }
        return String(decoding: bytes, as: UTF8.self)
    }, listFolder: { path in
        FileSystem.kind(path) == .directory ? ((try? FileSystem.entries(of: path)) ?? []) : nil
    })
    writeAll(1, JSONText.Node.object(ObjectModelJSON.node(plan)).render(indent: 2) + "\n")
} catch let error as SwiftModelError {
    fail(error.description, 65)
} catch let error as TripError {
    fail(error.description, Int32(error.kind.rawValue))
}
