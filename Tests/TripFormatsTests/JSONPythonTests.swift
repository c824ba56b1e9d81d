import Foundation
import Testing
import TripKit
@testable import TripFormats
import TripTestSupport

/// Runs python3 scripts for the JSON suites.
enum JSONPython {
    struct Failure: Error, CustomStringConvertible {
        let status: Int32
        let stderr: String
        var description: String { "python3 exited \(status): \(stderr)" }
    }

    /// Runs a script with arguments and returns its standard output; a non-zero exit throws.
    static func run(script: String, arguments: [String] = []) throws -> String {
        let result = try ExternalTool.python(script, arguments)
        guard result.status == 0 else { throw Failure(status: result.status, stderr: result.stderr) }
        return result.out
    }

    /// Reads a file we wrote with python3's json module (strict UTF-8) and prints, per trip, each
    /// member in order with its value: strings as code points in hex, so nothing is lost in printing.
    static let describeScript = #"""
    import json, sys
    def enc(v):
        if v is None: return 'null'
        if isinstance(v, bool): return 'true' if v else 'false'
        if isinstance(v, str): return 's:' + ' '.join('%X' % ord(c) for c in v)
        if isinstance(v, (int, float)): return 'n:' + repr(v)
        if isinstance(v, list): return '[' + ','.join(enc(x) for x in v) + ']'
        return '{' + ','.join(k + '=' + enc(x) for k, x in v.items()) + '}'
    path, fmt = sys.argv[1], sys.argv[2]
    text = open(path, 'rb').read().decode('utf-8')
    if fmt == 'json':
        doc = json.loads(text)
        print('version ' + doc['schemaVersion'] + ' keys ' + ','.join(doc.keys()))
        trips = doc['trips']
    else:
        lines = text.split('\n')
        assert lines[-1] == '', 'the file ends with a newline'
        trips = [json.loads(line) for line in lines[:-1]]
        # No character any line splitter honours (U+2028, U+0085, ...) is left raw.
        assert len(text.splitlines()) == len(trips), 'one line per trip'
    for t in trips:
        print(enc(t))
    """#

    /// What `describeScript` prints for objects of a schema's root entity.
    static func describe(_ object: ModelObject, _ entity: Entity, in schema: any VersionedSchema.Type) -> String {
        var parts: [String] = []
        for (i, a) in entity.attributes.enumerated() where !a.isTransient {
            parts.append(a.name + "=" + describe(object.attributes[i]))
        }
        for (i, r) in entity.relationships.enumerated() {
            let destination = schema.entity(r.destination)!
            let objects = object.relationships[i].objects
            if r.isToMany {
                parts.append(r.name + "=[" + objects.map { describe($0, destination, in: schema) }.joined(separator: ",") + "]")
            } else {
                parts.append(r.name + "=" + (objects.first.map { describe($0, destination, in: schema) } ?? "null"))
            }
        }
        return "{" + parts.joined(separator: ",") + "}"
    }

    static func describe(_ value: Value) -> String {
        func hex(_ s: String) -> String { "s:" + s.unicodeScalars.map { String($0.value, radix: 16, uppercase: true) }.joined(separator: " ") }
        switch value {
        case .null: return "null"
        case .string(let s): return hex(s)
        case .date(let t): return hex(t.iso8601)
        case .bool(let b): return b ? "true" : "false"
        case .int(let n): return "n:\(n)"
        }
    }
}

@Suite("JSON read by python3", .enabled(if: ExternalTool.python3 != nil, "python3 is not installed"))
struct JSONPythonTests {
    typealias S = JSONTestSupport

    @Test("python3's json module reads what we write and gets exactly the values",
          arguments: [Format.json, .jsonl], [0, 2])
    func pythonReadsOurOutput(format: Format, schemaIndex: Int) throws {
        let schema = JSONRoundTripTests.schemas[schemaIndex]
        var generator = ArbitraryTrips.json(seed: 0xC0FFEE + UInt64(schemaIndex))
        let trips = generator.trips(80, in: schema) + (schemaIndex == 2 ? [JSONWriterTests.paris] : [])
        let path = try S.writeFile(trips, format: format, schema: schema)
        let output = try JSONPython.run(script: JSONPython.describeScript, arguments: [path, format.rawValue])
        var expected = trips.map { JSONPython.describe($0, schema.rootEntity, in: schema) }
        if format == .json { expected.insert("version \(schema.versionIdentifier) keys schemaVersion,trips", at: 0) }
        let lines = output.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
        #expect(lines.count == expected.count)
        for (got, want) in zip(lines, expected) { #expect(got == want) }
    }
}
