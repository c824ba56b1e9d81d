import Foundation
import Testing
import TripKit
@testable import TripFormats
import TripTestSupport

/// The parser against ../shared/conformance: yaml-test-suite at the event level (through the same
/// parser and alias resolver as the trip reader), and the YAML attack files through the trip reader.
@Suite("YAMLConformance")
struct YAMLConformanceTests {
    typealias S = YAMLTestSupport

    static var suiteDirectory: String? {
        TestPaths.shared.map { $0 + "/conformance/yaml-test-suite/cases" }
    }

    static var hasSuite: Bool {
        suiteDirectory.map { FileManager.default.fileExists(atPath: $0) } ?? false
    }

    /// Case directories (`ID` or `ID/NN`) holding an `in.yaml`.
    static func cases() -> [String] {
        guard let root = suiteDirectory, let ids = try? FileManager.default.contentsOfDirectory(atPath: root) else { return [] }
        var out: [String] = []
        for id in ids.sorted() {
            if FileManager.default.fileExists(atPath: "\(root)/\(id)/in.yaml") { out.append(id); continue }
            for sub in ((try? FileManager.default.contentsOfDirectory(atPath: "\(root)/\(id)")) ?? []).sorted()
            where FileManager.default.fileExists(atPath: "\(root)/\(id)/\(sub)/in.yaml") {
                out.append("\(id)/\(sub)")
            }
        }
        return out
    }

    static func bytes(_ path: String) -> [UInt8] {
        (FileManager.default.contents(atPath: path)).map { [UInt8]($0) } ?? []
    }

    static func has(_ id: String, _ file: String) -> Bool {
        FileManager.default.fileExists(atPath: "\(suiteDirectory!)/\(id)/\(file)")
    }

    // MARK: - Known deviations of libyaml 0.2.5 (a YAML 1.1 parser) from the 2022 suite

    static let flowKeyReason = "YAML 1.2 flow syntax libyaml lacks (a ':' on a later line or right after a JSON-like key, plain scalars starting with '?' or ':')"
    static let tabReason = "libyaml refuses tabs as separation or leading content where YAML 1.2 allows them"
    static let documentReason = "libyaml needs a '---' where YAML 1.2 allows a bare document after '...', or a zero-indented block scalar"
    static let directiveReason = "libyaml rejects reserved or unknown directives and '%YAML 1.2'-era directive forms"
    static let anchorReason = "libyaml allows only [A-Za-z0-9_-] in anchor and alias names; YAML 1.2 allows any non-space, non-flow character"
    static let emptyKeyReason = "libyaml refuses empty (null) implicit keys, which YAML 1.2 allows"

    /// Valid cases libyaml refuses.
    static let refusedValid: [String: String] = [
        "2LFX": directiveReason, "6LVF": directiveReason, "MUS6/05": directiveReason, "MUS6/06": directiveReason,
        "BEC7": "libyaml refuses '%YAML 1.3' (a later minor version must be accepted with a warning)",
        "W4TN": directiveReason,
        "2SXE": anchorReason, "8XYN": anchorReason, "W5VH": anchorReason,
        "4ABK": flowKeyReason, "4MUZ/00": flowKeyReason, "4MUZ/01": flowKeyReason, "4MUZ/02": flowKeyReason,
        "58MP": flowKeyReason, "5MUD": flowKeyReason, "5T43": flowKeyReason, "9SA2": flowKeyReason, "CFD4": flowKeyReason,
        "DBG4": flowKeyReason, "FRK4": flowKeyReason, "HM87/00": flowKeyReason, "K3WX": flowKeyReason, "NJ66": flowKeyReason,
        "UT92": flowKeyReason, "VJP3/01": flowKeyReason,
        "6BCT": tabReason, "6CA3": tabReason, "96NN/00": tabReason, "96NN/01": tabReason, "A2M4": tabReason,
        "DK95/00": tabReason, "DK95/03": tabReason, "DK95/04": tabReason, "Q5MG": tabReason, "R4YG": tabReason,
        "Y79Y/001": tabReason, "Y79Y/010": tabReason,
        "7Z25": documentReason, "DK3J": documentReason, "FP8R": documentReason, "HWV9": documentReason,
        "M7A3": documentReason, "QT73": documentReason,
        "2JQS": emptyKeyReason, "6M2F": emptyKeyReason, "M2N8/00": emptyKeyReason, "NHX8": emptyKeyReason,
        "NKF9": emptyKeyReason, "S3PD": emptyKeyReason, "SM9W/01": emptyKeyReason, "UKK6/00": emptyKeyReason,
    ]

    /// Valid cases libyaml parses to other values than the suite's.
    static let misread: [String: String] = [
        "652Z": "libyaml reads '?foo' in a flow mapping as an explicit key indicator, not part of the plain scalar",
        "HM87/01": "libyaml reads '?x' in a flow sequence as an explicit key, making a mapping",
        "JEF9/02": "libyaml drops the kept final line break of a block scalar holding only whitespace lines",
        "L24T/01": "libyaml drops a kept trailing line of a literal scalar that holds only spaces",
        "Y2GN": "libyaml ends an anchor name at ':', YAML 1.2 does not",
    ]

    /// Error cases libyaml accepts: a known parser limitation, as the conformance README allows.
    static let acceptedErrors: [String: String] = [
        "9C9N": "libyaml accepts a flow sequence indented less than its parent",
        "QB6E": "libyaml accepts a multi-line quoted scalar indented less than its parent",
        "9HCY": "libyaml accepts a directive after a document without '...'",
        "EB22": "libyaml accepts a directive after a document without '...'",
        "RHX7": "libyaml accepts a directive after a document without '...'",
        "MUS6/00": "libyaml accepts a '%YAML 1.1' directive with a trailing comment-like token",
        "MUS6/01": "libyaml accepts a repeated %YAML directive",
        "9JBA": "libyaml accepts a comment without a space after a flow sequence",
        "CVW2": "libyaml accepts a comment without a space after a comma",
        "SU5Z": "libyaml accepts a comment without a space after a double-quoted scalar",
        "X4QW": "libyaml accepts a comment without a space after a block scalar indicator",
        "G5U8": "libyaml accepts '-' as an entry in a flow sequence",
        "YJV2": "libyaml accepts '-' as an entry in a flow sequence",
        "S98Z": "libyaml accepts a block scalar whose leading empty line is more indented than its content",
        "DK95/01": "libyaml accepts a tab that looks like indentation",
        "Y79Y/003": "libyaml accepts a tab that looks like indentation",
    ]

    static func load(_ id: String) -> Result<[YAMLValue], Error> {
        Result { try YAMLValueLoader.load(bytes("\(suiteDirectory!)/\(id)/in.yaml"), name: id) }
    }

    // MARK: - yaml-test-suite

    @Test("every case with in.json loads to its value under the YAML 1.2 core schema, but libyaml's known deviations",
          .enabled(if: hasSuite, "../shared/conformance/yaml-test-suite is absent"))
    func jsonCases() throws {
        var checked = 0
        for id in Self.cases() where Self.has(id, "in.json") {
            let want = try YAMLTestJSON.parseAll(String(decoding: Self.bytes("\(Self.suiteDirectory!)/\(id)/in.json"), as: UTF8.self))
            let got = Self.load(id)
            let agrees = (try? got.get()) == want
            if let reason = Self.refusedValid[id] ?? Self.misread[id] {
                // The list stays honest: a case that starts to agree must leave it.
                #expect(!agrees, "\(id) now loads as the suite says; remove it from the known deviations (\(reason))")
                continue
            }
            checked += 1
            switch got {
            case .failure(let error): Issue.record("\(id): refused: \(error)")
            case .success(let values): #expect(values == want, "\(id)")
            }
        }
        #expect(checked >= 230)
    }

    @Test("every error case is rejected, but those libyaml is known to accept",
          .enabled(if: hasSuite, "../shared/conformance/yaml-test-suite is absent"))
    func errorCases() {
        var checked = 0
        for id in Self.cases() where Self.has(id, "error") {
            let rejected: Bool
            switch Self.load(id) {
            case .success: rejected = false
            case .failure(let error):
                rejected = true
                #expect((error as? TripError)?.kind == .data, "\(id): \(error)")
            }
            if let reason = Self.acceptedErrors[id] {
                #expect(!rejected, "\(id) is now rejected; remove it from the known limitations (\(reason))")
                continue
            }
            checked += 1
            #expect(rejected, "\(id) was accepted")
        }
        #expect(checked >= 75)
    }

    @Test("every valid case without a JSON form parses, but those libyaml is known to refuse",
          .enabled(if: hasSuite, "../shared/conformance/yaml-test-suite is absent"))
    func valuesWithoutJSON() {
        var checked = 0
        for id in Self.cases() where !Self.has(id, "in.json") && !Self.has(id, "error") {
            let parsed = (try? Self.load(id).get()) != nil
            if Self.refusedValid[id] != nil {
                #expect(!parsed, "\(id) now parses; remove it from the known deviations")
                continue
            }
            checked += 1
            #expect(parsed, "\(id) was refused")
        }
        #expect(checked >= 15)
    }

    @Test("no case of the suite reads as trips, and none crashes the trip reader",
          .enabled(if: hasSuite, "../shared/conformance/yaml-test-suite is absent"))
    func suiteThroughTripReader() {
        for id in Self.cases() {
            do {
                let r = try S.read(bytes: Self.bytes("\(Self.suiteDirectory!)/\(id)/in.yaml"), name: id)
                #expect(r.trips.isEmpty, "\(id) gave trips")
            } catch let error as TripError {
                #expect(error.kind == .data, "\(id): \(error)")
                #expect(!error.message.contains("\n"), "\(id): a message of more than one line")
            } catch {
                Issue.record("\(id): \(error)")
            }
        }
    }

    // MARK: - Attacks

    static var attackDirectory: String? { TestPaths.shared.map { $0 + "/conformance/attacks/yaml" } }
    static var hasAttacks: Bool { attackDirectory.map { FileManager.default.fileExists(atPath: $0) } ?? false }

    @Test("the YAML attack files are refused by the trip reader, quickly, with one-line data errors",
          .enabled(if: hasAttacks, "../shared/conformance/attacks is absent"),
          arguments: ["billion-laughs.yaml", "billion-laughs-in-trip.yaml", "self-referencing-alias.yaml", "deep-flow-unclosed.yaml",
                      "deep-flow-10000.yaml", "deep-flow-mapping-10000.yaml", "deep-block-sequence-10000.yaml", "unsafe-tags.yaml"])
    func attacks(_ file: String) throws {
        let path = "\(Self.attackDirectory!)/\(file)"
        let start = Date()
        var error: TripError? = nil
        var trips = 0
        do {
            let r = try S.readFile(path)
            trips = r.trips.count
            #expect(!r.rejections.isEmpty, "\(file) was accepted")
        } catch let e as TripError {
            error = e
        }
        #expect(trips == 0)
        #expect(Date().timeIntervalSince(start) < 5)
        if let error {
            #expect(error.kind == .data)
            #expect(error.message.hasPrefix(path + ":"), "\(error.message)")
            #expect(!error.message.contains("PWNED"))
        }
    }

    @Test("the YAML attack files are refused or bounded at the parser level",
          .enabled(if: hasAttacks, "../shared/conformance/attacks is absent"),
          arguments: ["billion-laughs.yaml", "billion-laughs-in-trip.yaml", "self-referencing-alias.yaml", "deep-flow-unclosed.yaml",
                      "deep-flow-10000.yaml", "deep-flow-mapping-10000.yaml", "deep-block-sequence-10000.yaml"])
    func attacksAtParserLevel(_ file: String) {
        let start = Date()
        #expect(throws: TripError.self) { try YAMLValueLoader.load(Self.bytes("\(Self.attackDirectory!)/\(file)"), name: file) }
        #expect(Date().timeIntervalSince(start) < 5)
    }

    @Test("the alias bomb is refused as an alias bomb, the cycle as a cycle, unknown tags as unknown tags",
          .enabled(if: hasAttacks, "../shared/conformance/attacks is absent"))
    func attackMessages() throws {
        func message(_ file: String) -> String {
            do { _ = try YAMLValueLoader.load(Self.bytes("\(Self.attackDirectory!)/\(file)"), name: file); return "accepted" } catch { return "\(error)" }
        }
        #expect(message("billion-laughs.yaml").contains("refused as an alias bomb"))
        #expect(message("self-referencing-alias.yaml") == "self-referencing-alias.yaml:8:9: alias '*t' refers to a node that contains it, a cycle")
        #expect(message("deep-flow-unclosed.yaml") == "deep-flow-unclosed.yaml:1:257: nesting deeper than 256 levels")
        let path = "\(Self.attackDirectory!)/unsafe-tags.yaml"
        #expect(throws: TripError.data("\(path):2:11: unknown tag '!!python/object/apply:os.system'",
                                       notes: ["tripconv honours only the tags !!str, !!bool, !!int, !!timestamp, !!null, !!seq, !!map and !!merge"])) {
            _ = try S.readFile(path)
        }
    }
}
