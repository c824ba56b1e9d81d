import Foundation
import Testing
@testable import TripFormats
import TripTestSupport

@Suite("Core Data metadata plists")
struct CoreDataPropertyListTests {
    static func binary(_ value: Any) -> [UInt8] {
        [UInt8](try! PropertyListSerialization.data(fromPropertyList: value, format: .binary, options: 0))
    }

    @Test("a list Foundation writes reads back, every type of value")
    func foundation() throws {
        let bytes = Self.binary([
            "int": 42, "big": 1 << 40, "negative": -7, "real": 2.5, "true": true, "false": false,
            "ascii": "SQLite", "unicode": "Zürich ✈️ 京都", "data": Data([0, 1, 254, 255]),
            "date": Date(timeIntervalSinceReferenceDate: 736_248_600.25),
            "array": ["3.0.0", "", 1] as [Any], "nested": ["Trip": Data(repeating: 9, count: 32)],
            "long": String(repeating: "x", count: 300),
        ] as [String: Any])
        let value = try BinaryPropertyList.parse(bytes)
        #expect(value["int"] == .int(42))
        #expect(value["big"] == .int(1 << 40))
        #expect(value["negative"] == .int(-7))
        #expect(value["real"] == .real(2.5))
        #expect(value["true"] == .bool(true))
        #expect(value["false"] == .bool(false))
        #expect(value["ascii"] == .string("SQLite"))
        #expect(value["unicode"] == .string("Zürich ✈️ 京都"))
        #expect(value["data"] == .data([0, 1, 254, 255]))
        #expect(value["date"] == .date(736_248_600.25))
        #expect(value["array"] == .array([.string("3.0.0"), .string(""), .int(1)]))
        #expect(value["nested"]?["Trip"] == .data(Array(repeating: 9, count: 32)))
        #expect(value["long"] == .string(String(repeating: "x", count: 300)))
    }

    @Test("a list Python's plistlib writes reads back", .enabled(if: ExternalTool.python3 != nil, "needs python3"))
    func python() throws {
        let run = try ExternalTool.python("""
            import plistlib, sys
            d = {"NSStoreModelVersionIdentifiers": ["2.0.0"], "NSStoreType": "SQLite", "n": -(2**62), "u": "é" * 20,
                 "deep": [[[{"k": [1, 2.0, b"\\x00"]}]]], "many": list(range(40))}
            sys.stdout.buffer.write(plistlib.dumps(d, fmt=plistlib.FMT_BINARY))
            """)
        #expect(run.status == 0, "python3: \(run.stderr)")
        let value = try BinaryPropertyList.parse([UInt8](run.stdout))
        #expect(value["NSStoreModelVersionIdentifiers"] == .array([.string("2.0.0")]))
        #expect(value["n"] == .int(-(1 << 62)))
        #expect(value["u"] == .string(String(repeating: "é", count: 20)))
        #expect(value["deep"] == .array([.array([.array([.dictionary(["k": .array([.int(1), .real(2), .data([0])])])])])]))
        #expect(value["many"] == .array((0..<40).map { .int(Int64($0)) }))
    }

    @Test("every truncation of a list is an error, never a crash")
    func truncations() throws {
        let bytes = Self.binary(["NSStoreModelVersionIdentifiers": ["3.0.0"], "NSStoreType": "SQLite"] as [String: Any])
        for n in 0..<bytes.count {
            #expect(throws: BinaryPropertyList.Failure.self) { _ = try BinaryPropertyList.parse(Array(bytes.prefix(n))) }
        }
    }

    /// A list by hand: header, objects, offset table (1-byte offsets), trailer (1-byte references).
    static func handMade(objects: [[UInt8]], top: Int = 0, referenceSize: UInt8 = 1) -> [UInt8] {
        var out = Array("bplist00".utf8)
        var offsets: [UInt8] = []
        for o in objects { offsets.append(UInt8(out.count)); out += o }
        let table = out.count
        out += offsets
        out += [0, 0, 0, 0, 0, 0, 1, referenceSize]
        out += [0, 0, 0, 0, 0, 0, 0, UInt8(objects.count)]
        out += [0, 0, 0, 0, 0, 0, 0, UInt8(top)]
        out += [0, 0, 0, 0, 0, 0, 0, UInt8(table)]
        return out
    }

    @Test("hand-made hostile lists are refused with a reason", arguments: [
        // An array that holds itself.
        ("self", [[0xA1, 0x00]]),
        // An array whose element refers past the objects.
        ("reference", [[0xA1, 0x05]]),
        // A string whose count runs past the objects.
        ("string", [[0x5F, 0x10, 0xFF, 0x41]]),
        // A dictionary key that is an integer.
        ("key", [[0xD1, 0x01, 0x01], [0x10, 0x07]]),
        // An unknown marker.
        ("marker", [[0xF0]]),
        // An integer of 32 bytes.
        ("integer", [[0x15, 0, 0, 0]]),
    ] as [(String, [[UInt8]])])
    func hostile(name: String, objects: [[UInt8]]) throws {
        let bytes = Self.handMade(objects: objects)
        #expect(throws: BinaryPropertyList.Failure.self, "\(name)") { _ = try BinaryPropertyList.parse(bytes) }
    }

    @Test("shared references cannot make a small list explode")
    func sharedReferences() throws {
        // Object i is an array holding object i+1 twice: 2^40 nodes if expanded, 41 objects in the file.
        var objects: [[UInt8]] = (0..<40).map { [0xA2, UInt8($0 + 1), UInt8($0 + 1)] }
        objects.append([0x10, 0x01])
        #expect(throws: BinaryPropertyList.Failure.self) { _ = try BinaryPropertyList.parse(Self.handMade(objects: objects)) }
    }

    @Test("random damage to a list is an error or a value, never a crash", arguments: [1, 2, 3, 4] as [UInt64])
    func damage(seed: UInt64) throws {
        let original = Self.binary(["NSStoreModelVersionIdentifiers": ["3.0.0"], "NSStoreUUID": "X", "h": ["Trip": Data(count: 32)],
                                    "n": 1338, "a": [1, 2, 3]] as [String: Any])
        var random = SplitMix64(seed: seed)
        var refused = 0
        for _ in 0..<500 {
            var bytes = original
            for _ in 0...random.below(4) { bytes[random.below(bytes.count)] = UInt8(random.below(256)) }
            do {
                _ = try BinaryPropertyList.parse(bytes)
            } catch is BinaryPropertyList.Failure {
                refused += 1
            } catch {
                Issue.record("damage gave an error that is not a Failure: \(error)")
            }
        }
        #expect(refused > 0, "some damage is found")
    }
}
