import Foundation
import Testing
import TripKit
@testable import TripFormats
import TripTestSupport

/// nst/JSONTestSuite, from ../shared/conformance: y_ must parse, n_ must be refused with a place,
/// i_ may go either way but never crash.
@Suite("JSON conformance (JSONTestSuite)",
       .enabled(if: JSONTestSupport.conformanceDirectory != nil,
                "../shared/conformance/JSONTestSuite/test_parsing is absent; the JSONTestSuite cases are skipped"))
struct JSONConformanceTests {
    typealias S = JSONTestSupport

    @Test("the suite is all there")
    func suiteIsComplete() {
        #expect(S.conformanceFiles("y_").count == 95)
        #expect(S.conformanceFiles("n_").count == 188)
        #expect(S.conformanceFiles("i_").count == 35)
    }

    @Test("every y_ file parses without a syntax error", arguments: S.conformanceFiles("y_"))
    func accepts(name: String) throws {
        let bytes = try S.conformanceBytes(name)
        #expect(throws: Never.self) { try JSONSyntax.validate(bytes) }
        // Tokens split across tiny chunks parse the same.
        #expect(throws: Never.self) { try JSONSyntax.validate(bytes, chunkSize: 3) }
    }

    @Test("every n_ file is refused with a syntax error carrying line and column", arguments: S.conformanceFiles("n_"))
    func refuses(name: String) throws {
        let bytes = try S.conformanceBytes(name)
        for chunkSize in [1 << 16, 3] {
            do {
                try JSONSyntax.validate(bytes, chunkSize: chunkSize)
                Issue.record("\(name) was accepted")
            } catch let error as JSONSyntaxError {
                #expect(error.line >= 1 && error.column >= 1)
                #expect(!error.message.isEmpty)
            }
        }
    }

    @Test("every i_ file is accepted or refused with a place, never a crash", arguments: S.conformanceFiles("i_"))
    func either(name: String) throws {
        let bytes = try S.conformanceBytes(name)
        do {
            try JSONSyntax.validate(bytes)
        } catch let error as JSONSyntaxError {
            #expect(error.line >= 1 && error.column >= 1)
        }
    }

    @Test("the trip reader gives a y_ file no syntax error: zero trips, rejected records or a shape error",
          arguments: S.conformanceFiles("y_"))
    func tripReaderOnValidJSON(name: String) throws {
        let bytes = try S.conformanceBytes(name)
        do {
            let result = try S.read(bytes: bytes, name: name)
            #expect(result.trips.isEmpty, "\(name) is not trips")
            if bytes.count > 2 && result.order.isEmpty {
                // Only an empty array is zero trips.
                #expect(String(decoding: bytes, as: UTF8.self).filter { !$0.isWhitespace } == "[]")
            }
        } catch let error as TripError {
            #expect(error.kind == .data)
            #expect(error.message.contains(#"expected an array of trips, a trip object or {"schemaVersion", "trips"}, found"#),
                    "\(name): \(error.message)")
        }
    }

    @Test("the trip reader refuses an n_ file: a thrown error with a place, or a rejected record",
          arguments: S.conformanceFiles("n_"))
    func tripReaderOnInvalidJSON(name: String) throws {
        let bytes = try S.conformanceBytes(name)
        for format in [Format.json, .jsonl] {
            do {
                let result = try S.read(bytes: bytes, format: format, name: name)
                #expect(result.trips.isEmpty)
                // Empty or blank JSON Lines are zero trips (n_structure_no_data, n_single_space).
                let isBlank = bytes.drop { $0 == 0xEF || $0 == 0xBB || $0 == 0xBF }.allSatisfy { $0 == 0x20 || $0 == 0x0A }
                #expect(!result.rejections.isEmpty || (format == .jsonl && isBlank),
                        "\(name) read as \(format.rawValue) without an error or a rejection")
            } catch let error as TripError {
                #expect(error.kind == .data)
                #expect(error.message.hasPrefix("\(name):"), "\(error.message)")
            }
        }
    }

    @Test("the trip reader never crashes on an i_ file, and whatever it keeps is valid Unicode",
          arguments: S.conformanceFiles("i_"))
    func tripReaderOnEitherJSON(name: String) throws {
        let bytes = try S.conformanceBytes(name)
        for format in [Format.json, .jsonl] {
            do {
                let result = try S.read(bytes: bytes, format: format, name: name)
                for r in result.rejections {
                    // Swift strings hold only Unicode scalars: no lone surrogate survives.
                    #expect(r.reason.unicodeScalars.allSatisfy { !(0xD800...0xDFFF).contains($0.value) })
                }
            } catch let error as TripError {
                #expect(error.kind == .data)
            }
        }
    }

    @Test("the decoded strings of y_ files are exactly what python3's json module reads",
          .enabled(if: ExternalTool.python3 != nil, "python3 is not installed"))
    func decodedStringsMatchPython() throws {
        // Every y_ file that is an array of strings: read the strings through the JSON Lines path
        // (one string per line, as a trip name) and compare code points with python3.
        let names = S.conformanceFiles("y_string_")
        var checked = 0
        for name in names {
            let bytes = try S.conformanceBytes(name)
            let python = try JSONPython.run(script: """
                import json, sys
                v = json.loads(open(sys.argv[1], 'rb').read().decode('utf-8'))
                if isinstance(v, list) and len(v) == 1 and isinstance(v[0], str):
                    print(' '.join('%X' % ord(c) for c in v[0]))
                else:
                    print('-')
                """, arguments: [S.conformanceDirectory!.appendingPathComponent(name).path])
            let expected = python.trimmingCharacters(in: .newlines)
            guard expected != "-" else { continue }
            let text = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            let trip = #"{"name": \#(text.dropFirst().dropLast()), "destination": "", "startDate": 0, "endDate": 0}"#
            let result = try S.read(bytes: Array(trip.utf8), format: .jsonl)
            guard case .string(let s)? = result.objects.first?.attributes[0] else {
                Issue.record("\(name): no trip read: \(result.rejections)")
                continue
            }
            #expect(s.unicodeScalars.map { String($0.value, radix: 16, uppercase: true) }.joined(separator: " ") == expected, "\(name)")
            checked += 1
        }
        #expect(checked > 30)
    }
}
