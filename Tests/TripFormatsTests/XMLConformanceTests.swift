import Foundation
import Testing
import TripFormats
import TripKit
import TripTestSupport

/// One case of a conformance manifest.
struct XMLConformanceCase: CustomStringConvertible, Sendable {
    var file: String
    var expect: String
    var hasDoctype: Bool
    var mustNotContain: [String]
    var description: String { file }
}

private func manifest(_ relative: String) -> [XMLConformanceCase] {
    guard let root = TestPaths.conformance,
          let data = FileManager.default.contents(atPath: root + "/" + relative),
          let list = try? JSONSerialization.jsonObject(with: data) as? [[String: Any]] else { return [] }
    return list.compactMap { entry in
        guard let file = entry["file"] as? String, let expect = entry["expect"] as? String else { return nil }
        return XMLConformanceCase(file: file, expect: expect, hasDoctype: entry["has_doctype"] as? Bool ?? false,
                       mustNotContain: entry["must_not_contain"] as? [String] ?? [])
    }
}

private let libxml2Cases = manifest("libxml2/manifest.json")
private let attackCases = manifest("attacks/manifest.json").filter { $0.file.hasPrefix("xml/") }

/// What reading a case gave: trips, or the error, and how long it took.
private struct Outcome {
    var result: XMLReadResult?
    var error: TripError?
    var seconds: Double
}

/// Reads a conformance file from a copy in a temporary directory where every other file beside it
/// (the .ent, .dtd and .txt files an attack points at) is a FIFO: opening one would block, so a read
/// that finishes shows no such file was opened.
private func readGuarded(_ path: String) throws -> Outcome {
    let dir = ScratchDirectory()
    let source = (path as NSString).deletingLastPathComponent
    let own = (path as NSString).lastPathComponent
    for name in try FileManager.default.contentsOfDirectory(atPath: source) where name != own && !name.hasSuffix(".xml") {
        #expect(mkfifo(dir.path + "/" + name, 0o600) == 0)
    }
    let copy = dir.path + "/" + (path as NSString).lastPathComponent
    try FileManager.default.copyItem(atPath: path, toPath: copy)
    return try withExtendedLifetime(dir) {
        let start = Date()
        do {
            let result = try xmlReadWithDeadline(copy)
            return Outcome(result: result, error: nil, seconds: Date().timeIntervalSince(start))
        } catch let error as TripError {
            return Outcome(result: nil, error: error, seconds: Date().timeIntervalSince(start))
        }
    }
}

/// Everything a read let out: the trips written as XML.
private func output(_ result: XMLReadResult?) throws -> String {
    guard let result else { return "" }
    return try xmlWrite(result.objects, schema: TripMigrationPlan.schema(for: result.detection.version ?? SchemaVersion(3, 0, 0))!)
}

/// A shape error or a DTD refusal: an error about what the document says, not how it is written.
private func isShapeOrDTDError(_ error: TripError, doctype: Bool) -> Bool {
    error.message.contains("expected a <trip> element") || (doctype && error.message.contains("DTD declarations are not allowed"))
}

@Suite("XMLConformance", .enabled(if: TestPaths.conformance != nil, "../shared/conformance is absent"))
struct XMLConformanceTests {
    @Test("libxml2's must-reject documents are rejected as data errors, the file of no bytes too, as a document of no bytes is (issue 25)",
          arguments: libxml2Cases.filter { $0.expect == "reject" })
    func mustReject(_ c: XMLConformanceCase) throws {
        let path = TestPaths.conformance! + "/libxml2/" + c.file
        let outcome = try readGuarded(path)
        #expect(outcome.error?.kind == .data, "\(c.file) was accepted")
        #expect(outcome.error?.message.contains("\n") == false)
    }

    @Test("libxml2's well-formed documents give no syntax error", arguments: libxml2Cases.filter { $0.expect == "wf-not-trip" })
    func wellFormed(_ c: XMLConformanceCase) throws {
        let outcome = try readGuarded(TestPaths.conformance! + "/libxml2/" + c.file)
        if let error = outcome.error {
            #expect(isShapeOrDTDError(error, doctype: c.hasDoctype), "\(c.file): \(error.message)")
        } else {
            // Accepted: a root with no trip in it, an empty list.
            #expect(outcome.result?.trips.isEmpty == true)
        }
    }

    @Test("libxml2's either documents are accepted or rejected, never more", arguments: libxml2Cases.filter { $0.expect == "either" })
    func either(_ c: XMLConformanceCase) throws {
        let outcome = try readGuarded(TestPaths.conformance! + "/libxml2/" + c.file)
        #expect(outcome.result != nil || outcome.error?.kind == .data)
        #expect(outcome.seconds < 1)
    }

    @Test("entity-expansion documents are refused in bounded time, reading no other file", arguments: libxml2Cases.filter { $0.expect == "attack" })
    func entityExpansion(_ c: XMLConformanceCase) throws {
        let outcome = try readGuarded(TestPaths.conformance! + "/libxml2/" + c.file)
        #expect(outcome.seconds < 1, "\(c.file) took \(outcome.seconds) s")
        if let result = outcome.result {
            // Accepted only when it holds nothing: nothing was expanded into a value.
            #expect(result.trips.isEmpty && result.rejections.isEmpty, "\(c.file) gave records")
        } else {
            #expect(outcome.error?.kind == .data)
        }
    }

    @Test("the XML attacks are refused or harmless, in bounded time", arguments: attackCases)
    func attack(_ c: XMLConformanceCase) throws {
        let outcome = try readGuarded(TestPaths.conformance! + "/attacks/" + c.file)
        #expect(outcome.seconds < 1, "\(c.file) took \(outcome.seconds) s")
        switch c.expect {
        case "reject":
            #expect(outcome.error?.kind == .data, "\(c.file) was accepted")
        case "reject-or-no-leak", "reject-or-accept":
            let written = try output(outcome.result)
            for sentinel in c.mustNotContain + ["XXE-SENTINEL", "root:"] {
                #expect(!written.contains(sentinel), "\(c.file) leaked \(sentinel)")
            }
            #expect(outcome.result != nil || outcome.error?.kind == .data)
        default:
            // external-dtd-loopback: a valid trip list that names an external DTD.
            #expect(outcome.result?.objects.map { $0.attributes[0] } == [.string("External DTD")], "\(outcome.error?.message ?? "")")
        }
    }

    @Test("an external DTD over HTTP is not fetched: no connection reaches a listening socket")
    func noNetwork() throws {
        let listener = try XMLLoopbackListener()
        let text = try String(contentsOfFile: TestPaths.conformance! + "/attacks/xml/external-dtd-loopback.xml", encoding: .utf8)
            .replacingOccurrences(of: "127.0.0.1:9", with: "127.0.0.1:\(listener.port)")
        #expect(text.contains(":\(listener.port)/"))
        let dir = ScratchDirectory()
        let path = dir.file("loopback.xml", text)
        let result = try withExtendedLifetime(dir) { try xmlReadWithDeadline(path) }
        #expect(result?.objects.count == 1)
        #expect(!listener.wasConnected, "the reader connected to \(listener.port)")
        // The entity form is refused before any connection too.
        let entity = "<?xml version=\"1.0\"?>\n<!DOCTYPE trips [\n<!ENTITY oob SYSTEM \"http://127.0.0.1:\(listener.port)/leak\">\n]>\n<trips><trip><name>&oob;</name></trip></trips>"
        #expect(xmlReadError(text: entity)?.kind == .data)
        #expect(!listener.wasConnected, "the reader connected to \(listener.port)")
    }
}

/// A TCP socket listening on 127.0.0.1 at a free port, which tells whether anything connected.
final class XMLLoopbackListener {
    let fd: Int32
    let port: UInt16

    init() throws {
        let s = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard s >= 0 else { throw TripError(.io, "socket failed") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(s, $0, length) } }
        guard bound == 0, listen(s, 8) == 0 else { close(s); throw TripError(.io, "bind/listen failed") }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(s, $0, &length) } }
        _ = fcntl(s, F_SETFL, fcntl(s, F_GETFL) | O_NONBLOCK)
        fd = s
        port = UInt16(bigEndian: address.sin_port)
    }

    deinit { close(fd) }

    /// Whether a connection is waiting to be accepted.
    var wasConnected: Bool {
        let client = accept(fd, nil, nil)
        if client >= 0 { close(client); return true }
        return false
    }
}
