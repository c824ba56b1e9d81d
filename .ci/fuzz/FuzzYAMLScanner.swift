// The YAML block-subset scanner against libyaml: `yaml-scanner`.
//
// The input is read twice as YAML, by `YAMLEventParser` allowed to use the scanner and by libyaml
// alone. When the scanner took the input, the two event streams must be the same, event by event:
// kind, style, line, column, text, mapping offset, and the error that ends the stream, if any. Any
// difference is a finding (the scanner must read what it accepts exactly as libyaml does, and leave
// everything else to libyaml). Inputs the scanner declines are read by libyaml both times: nothing
// to compare. Needs the internals of TripFormats: .ci/fuzz/run builds it with -enable-testing.
#if canImport(Glibc)
import Glibc
#endif
import TripKit
@testable import TripFormats

let fuzzYAMLScannerTarget = FuzzTarget(name: "yaml-scanner") { fuzzYAMLScanner($0) }

/// The events of `bytes` as one line each, and whether the scanner read them.
func fuzzYAMLEventLines(_ bytes: [UInt8], scanner: Bool) -> (lines: [String], scanned: Bool) {
    var limits = YAMLLimits()
    limits.usesBlockScanner = scanner
    let parser = YAMLEventParser(bytes: bytes, name: "fuzz.yaml", limits: limits)
    var lines: [String] = []
    var depth = 0
    // The scanner gives no more events than lines and bytes allow; the bound only guards the loop.
    while lines.count <= bytes.count * 4 + 16 {
        do {
            let e = try parser.next()
            lines.append("\(e.kind) \(e.style) \(e.line):\(e.column) \(e.value.debugDescription) at \(parser.mappingOffset(of: e))")
            if e.kind == .streamEnd { break }
            // Past the reader's nesting limit the reader stops (YAMLLimits.maxDepth), and so do we:
            // libyaml slows down quadratically on deep flow nesting (`[[[[...`).
            if e.isCollectionStart { depth += 1 } else if e.isCollectionEnd { depth -= 1 }
            if depth > limits.maxDepth { break }
        } catch {
            lines.append("error: \(error)")
            break
        }
    }
    return (lines, parser.readsWithBlockScanner)
}

func fuzzYAMLScanner(_ input: UnsafeBufferPointer<UInt8>) {
    let bytes = Array(input)
    let scanned = fuzzYAMLEventLines(bytes, scanner: true)
    fuzzNote("scanner \(scanned.scanned ? "read" : "declined") the input: \(scanned.lines.count) events")
    guard scanned.scanned else { return }
    let libyaml = fuzzYAMLEventLines(bytes, scanner: false)
    guard scanned.lines != libyaml.lines else { return }
    let i = (0..<min(scanned.lines.count, libyaml.lines.count)).first { scanned.lines[$0] != libyaml.lines[$0] }
        ?? min(scanned.lines.count, libyaml.lines.count)
    func at(_ lines: [String]) -> String { i < lines.count ? lines[i] : "(no event)" }
    fuzzFinding("the YAML scanner's event \(i) differs from libyaml's: scanner \(at(scanned.lines)); libyaml \(at(libyaml.lines))")
}
