// Files shaped as other tools write them, read back value for value: `foreign-csv` and `foreign-xml`.
//
// The input is not a file: its bytes drive a generator of trips and of the way a foreign writer would
// write them, and the target writes that file itself with a writer of its own, apart from tripconv's
// (the shapes of Python's csv module in each quoting style, delimiters, line ends and encodings, R's
// NA; ElementTree's and lxml's XML with fields as attributes or elements, character references,
// CDATA, comments, processing instructions, namespaces, UTF-16 and ISO-8859-1). tripconv's reader
// must then read exactly the trips written. A finding is a read that fails, rejects, loses, adds or
// changes a trip: it names the dialect, the trip written and the trip read.
#if canImport(Glibc)
import Glibc
#endif
import TripKit
import TripFormats

let fuzzForeignTargets = [
    FuzzTarget(name: "foreign-csv") { fuzzForeign($0, xml: false) },
    FuzzTarget(name: "foreign-xml") { fuzzForeign($0, xml: true) },
]

/// The input's bytes as a stream of choices; 0 once they run out.
struct FuzzChoices {
    let bytes: UnsafeBufferPointer<UInt8>
    var at = 0
    mutating func byte() -> Int {
        defer { at += 1 }
        return at < bytes.count ? Int(bytes[at]) : 0
    }
    mutating func below(_ n: Int) -> Int { n <= 1 ? 0 : byte() % n }
    mutating func chance(_ inEight: Int) -> Bool { byte() & 7 < inEight }
    var exhausted: Bool { at >= bytes.count }
}

/// The characters strings are made of: the ones each format must escape or quote, spaces, line
/// breaks, words that look like other types, and any scalar (XML: only the ones XML 1.0 allows).
func fuzzScalar(_ c: inout FuzzChoices, xml: Bool) -> String {
    let special = [",", ";", "\t", "|", "\"", "'", "\n", "\r", "\r\n", " ", "&", "<", ">", "]]>", "&amp;", "&#38;",
                   "NA", "=", "é", "€", "日", "😀", "\u{FEFF}", "\u{2028}", ":", "-", "sep=", "\\"]
    switch c.below(4) {
    case 0, 1: return special[c.below(special.count)]
    case 2: return String(UnicodeScalar(UInt8(0x20 + c.below(0x5F))))
    default:
        var v = UInt32(c.byte()) << 8 | UInt32(c.byte())
        if c.chance(2) { v = 0x10000 + (v << 4) % 0x100000 }
        guard let u = Unicode.Scalar(v), v != 0 else { return "?" }
        if xml && ((v < 0x20 && v != 9 && v != 10 && v != 13) || v == 0xFFFE || v == 0xFFFF) { return "?" }
        return String(u)
    }
}

func fuzzForeignString(_ c: inout FuzzChoices, xml: Bool, nonEmpty: Bool) -> String {
    var s = ""
    for _ in 0..<c.below(9) { s += fuzzScalar(&c, xml: xml) }
    if nonEmpty && s.isEmpty { s = "n" }
    return s
}

/// Trips in 3.0.0's layout, as the readers build them.
func fuzzForeignTrips(_ c: inout FuzzChoices, xml: Bool) -> [ModelObject] {
    var trips: [ModelObject] = []
    var names: Set<String> = []
    for _ in 0..<(1 + c.below(4)) {
        let name = fuzzForeignString(&c, xml: xml, nonEmpty: true)
        guard names.insert(name).inserted else { continue }
        // Every character of a name or destination may be a space, but not all of them may be empty.
        let destination = fuzzForeignString(&c, xml: xml, nonEmpty: true)
        let start = Int64(c.byte() << 16 | c.byte() << 8 | c.byte()) * 60_000 + (c.chance(3) ? Int64(c.below(1000)) : 0)
        let end = start + Int64(c.byte()) * 3_600_000
        var items: [ModelObject] = []
        for _ in 0..<c.below(4) {
            items.append(ModelObject(attributes: [.string(fuzzForeignString(&c, xml: xml, nonEmpty: false)),
                                                  .string(fuzzForeignString(&c, xml: xml, nonEmpty: false)),
                                                  .bool(c.chance(4)), .bool(c.chance(4))]))
        }
        var place: ModelObject?
        if c.chance(5) {
            let a = fuzzForeignString(&c, xml: xml, nonEmpty: false), p = fuzzForeignString(&c, xml: xml, nonEmpty: false)
            // An accommodation of nothing but defaults reads as none.
            if !(a.isEmpty && p.isEmpty) { place = ModelObject(attributes: [.string(a), .string(p)]) }
        }
        trips.append(ModelObject(attributes: [.string(name), .string(destination), .date(Timestamp(milliseconds: start)),
                                              .date(Timestamp(milliseconds: end)), .int(0)],
                                 relationships: [.toMany(items), .toOne(place)]))
    }
    return trips
}

func fuzzForeign(_ input: UnsafeBufferPointer<UInt8>, xml: Bool) {
    var c = FuzzChoices(bytes: input)
    let style = c.byte()
    let trips = fuzzForeignTrips(&c, xml: xml)
    let (bytes, dialect, options) = xml ? fuzzForeignXML(trips, style: style) : fuzzForeignCSV(trips, style: style)
    let path = fuzzScratch(xml ? "foreign.xml" : "foreign.csv")
    bytes.withUnsafeBufferPointer { fuzzWrite(path, $0) }
    var back: [ModelObject] = []
    do {
        var reader = try FormatFactory.makeReader(.file(path), format: xml ? .xml : .csv, options: options)
        while let item = try reader.next() {
            switch item {
            case .trip(let record): back.append(record.object)
            case .rejected(let r):
                fuzzFinding("\(dialect): a trip written is rejected: \(r.origin): \(r.reason)\n  text \(r.text.map { $0.debugDescription } ?? "none")")
            }
        }
    } catch {
        fuzzFinding("\(dialect): the file cannot be read: \(error)\n  trips \(trips.map(fuzzDescribe).joined(separator: "\n        "))")
    }
    guard back.count == trips.count else {
        fuzzFinding("\(dialect): wrote \(trips.count) trip(s), read \(back.count)")
    }
    for (i, (a, b)) in zip(trips, back).enumerated() where a != b {
        fuzzFinding("\(dialect): trip \(i + 1) changed:\n  wrote \(fuzzDescribe(a))\n  read  \(fuzzDescribe(b))")
    }
    fuzzNote("\(dialect): \(trips.count) trip(s) read back as written")
}

// MARK: - CSV as Python's csv module (and R) write it

func fuzzForeignCSV(_ trips: [ModelObject], style: Int) -> ([UInt8], String, ReadOptions) {
    let quoting = ["minimal", "all", "nonnumeric"][style % 3]
    let delimiters: [UInt8] = [44, 59, 9, 124, 58]        // , ; tab | and `:`, which only a given delimiter reads
    let delimiter = delimiters[(style / 3) % 5]
    let terminator = ["\r\n", "\n", "\r"][(style / 15) % 3]
    let encoding = (style / 45) % 4                        // UTF-8, UTF-8 with BOM, UTF-16 LE and BE with BOMs
    let sepLine = style & 0x80 != 0 && delimiter != 58
    var options = ReadOptions()
    if delimiter == 58 || (style & 0x40 != 0) { options.csvDelimiter = delimiter }
    let dialect = "csv \(quoting) delimiter \(delimiter == 9 ? "tab" : String(UnicodeScalar(delimiter))) \(terminator.debugDescription) "
        + ["utf-8", "utf-8+BOM", "utf-16le+BOM", "utf-16be+BOM"][encoding] + (sepLine ? " sep=" : "")
        + (options.csvDelimiter != nil ? " --csv-delimiter" : "")

    let longest = trips.map { $0.relationships[0].objects.count }.max() ?? 0
    var header = ["name", "destination", "startDate", "endDate", "livingAccommodation.address", "livingAccommodation.placeName"]
    for n in 0..<longest { header += ["title", "details", "hasReservation", "isInPlan"].map { "bucketList.\(n + 1).\($0)" } }
    enum Cell { case text(String), bool(Bool), missing }
    var rows: [[Cell]] = [header.map { .text($0) }]
    for t in trips {
        var row: [Cell] = t.attributes[0..<4].map { v in
            switch v {
            case .string(let s): return .text(s)
            case .date(let d): return .text(d.iso8601)
            default: return .missing
            }
        }
        if let p = t.relationships[1].objects.first {
            row += p.attributes.map { if case .string(let s) = $0 { return .text(s) } else { return .missing } }
        } else {
            row += [.missing, .missing]
        }
        let items = t.relationships[0].objects
        for n in 0..<longest {
            if n < items.count {
                row += items[n].attributes.map { v in
                    switch v {
                    case .string(let s): return .text(s)
                    case .bool(let b): return .bool(b)
                    default: return .missing
                    }
                }
            } else {
                row += [.missing, .missing, .missing, .missing]
            }
        }
        rows.append(row)
    }
    let quote = "\""
    let delimiterText = String(UnicodeScalar(delimiter))
    func field(_ cell: Cell) -> String {
        let text: String
        switch cell {
        case .bool(let b):
            // Python writes its bools unquoted under QUOTE_NONNUMERIC; as text the others.
            if quoting == "nonnumeric" { return b ? "True" : "False" }
            text = b ? "true" : "false"
        case .missing:
            // Python writes None as an empty field, quoted where every string is; R writes NA bare.
            if quoting == "minimal" { return "" }
            return style & 0x20 != 0 ? "NA" : quote + quote
        case .text(let s): text = s
        }
        let needs = quoting != "minimal" || text.unicodeScalars.contains { $0 == "\"" || $0 == "\n" || $0 == "\r" || $0 == UnicodeScalar(delimiter) }
        guard needs else { return text }
        var quoted = String.UnicodeScalarView()
        quoted.append("\"")
        for u in text.unicodeScalars { quoted.append(u); if u == "\"" { quoted.append(u) } }
        quoted.append("\"")
        return String(quoted)
    }
    var text = sepLine ? "sep=\(delimiterText)\(terminator)" : ""
    for row in rows { text += row.map(field).joined(separator: delimiterText) + terminator }
    var bytes: [UInt8]
    switch encoding {
    case 0: bytes = Array(text.utf8)
    case 1: bytes = [0xEF, 0xBB, 0xBF] + Array(text.utf8)
    case 2: bytes = [0xFF, 0xFE]; for u in text.utf16 { bytes += [UInt8(u & 0xFF), UInt8(u >> 8)] }
    default: bytes = [0xFE, 0xFF]; for u in text.utf16 { bytes += [UInt8(u >> 8), UInt8(u & 0xFF)] }
    }
    return (bytes, dialect, options)
}

// MARK: - XML as ElementTree and lxml write it, and as hand-edited exports hold it

func fuzzForeignXML(_ trips: [ModelObject], style: Int) -> ([UInt8], String, ReadOptions) {
    let namespace = style % 3                 // none, a default namespace, a prefix
    let pretty = style & 4 != 0
    let encoding = (style >> 3) % 3           // UTF-8, UTF-16 (BOM), ISO-8859-1 where every character fits
    let marker = style & 0x20 != 0
    let oddities = style & 0x40 != 0          // comments, processing instructions, CDATA, character references
    let attributesFirst = style & 0x80 != 0
    let latin1 = encoding == 2 && trips.allSatisfy { fuzzStrings($0).allSatisfy { $0.unicodeScalars.allSatisfy { $0.value <= 0xFF } } }
    let dialect = "xml " + ["no namespace", "default namespace", "prefixed"][namespace] + (pretty ? " pretty" : " one line")
        + " " + ["utf-8", "utf-16", latin1 ? "iso-8859-1" : "utf-8 (not latin-1)"][encoding] + (marker ? " marker" : "")
        + (oddities ? " comments/PIs/CDATA/refs" : "") + (attributesFirst ? " attributes" : " elements")
    let p = namespace == 2 ? "t:" : ""
    var counter = 0
    /// A deterministic choice from the style and a running counter, so each field varies.
    func pick(_ n: Int) -> Int {
        counter += 1
        return (style &* 31 &+ counter &* 17 &+ (counter >> 2)) % n
    }
    func escapeText(_ s: String) -> String {
        var out = ""
        for u in s.unicodeScalars {
            switch u {
            case "&": out += oddities && pick(2) == 0 ? "&#38;" : "&amp;"
            case "<": out += oddities && pick(2) == 0 ? "&#x3C;" : "&lt;"
            case ">": out += "&gt;"
            case "\r": out += "&#13;"   // a bare CR is a line end, which XML reads as LF
            default:
                if oddities && u.value > 0x7F && pick(3) == 0 { out += "&#x\(String(u.value, radix: 16));" } else { out.unicodeScalars.append(u) }
            }
        }
        return out
    }
    func escapeAttribute(_ s: String) -> String {
        var out = ""
        for u in s.unicodeScalars {
            switch u {
            case "&": out += pick(2) == 0 ? "&#38;" : "&amp;"
            case "<": out += "&lt;"
            case "\"": out += pick(2) == 0 ? "&quot;" : "&#34;"
            case "\t": out += "&#9;"
            case "\n": out += "&#10;"
            case "\r": out += "&#13;"
            default: out.unicodeScalars.append(u)
            }
        }
        return out
    }
    /// A field's element text: escaped, or now and then a CDATA section (split where the text holds
    /// `]]>`; CR stays a character reference outside it), with a comment or PI inside.
    func elementText(_ s: String) -> String {
        guard oddities, !s.isEmpty else { return escapeText(s) }
        switch pick(4) {
        case 0 where !s.unicodeScalars.contains("\r"):
            return "<![CDATA[" + s.replacingScalars(of: "]]>", with: "]]]]><![CDATA[>") + "]]>"
        case 1:
            let cut = s.index(s.startIndex, offsetBy: s.count / 2)
            return escapeText(String(s[..<cut])) + "<!-- in a field -->" + escapeText(String(s[cut...]))
        case 2:
            return "<?note x?>" + escapeText(s)
        default:
            return escapeText(s)
        }
    }
    let nl = pretty ? "\n" : ""
    func indent(_ n: Int) -> String { pretty ? String(repeating: "  ", count: n) : "" }
    /// An object's fields, each an attribute or a child element.
    func object(_ tag: String, _ fields: [(String, String)], children: String = "", depth: Int) -> String {
        var attributes = "", elements = ""
        for (name, value) in fields {
            if attributesFirst ? pick(4) != 0 : pick(4) == 0 {
                attributes += " \(name)=\"\(escapeAttribute(value))\""
            } else {
                elements += indent(depth + 1) + "<\(p)\(name)>\(elementText(value))</\(p)\(name)>" + nl
                if oddities && pick(5) == 0 { elements += indent(depth + 1) + "<!-- between fields -->" + nl }
            }
        }
        if elements.isEmpty && children.isEmpty { return indent(depth) + "<\(p)\(tag)\(attributes)/>" + nl }
        return indent(depth) + "<\(p)\(tag)\(attributes)>" + nl + elements + children + indent(depth) + "</\(p)\(tag)>" + nl
    }
    func text(_ v: Value) -> String {
        switch v {
        case .string(let s): return s
        case .date(let d): return d.iso8601
        case .bool(let b): return b ? "true" : "false"
        default: return ""
        }
    }
    var body = ""
    for t in trips {
        var children = ""
        let items = t.relationships[0].objects
        if !items.isEmpty || pick(2) == 0 {
            var list = ""
            for item in items {
                list += object("item", zip(["title", "details", "hasReservation", "isInPlan"], item.attributes.map(text)).map { ($0, $1) }, depth: 3)
            }
            children += list.isEmpty ? indent(2) + "<\(p)bucketList/>" + nl : indent(2) + "<\(p)bucketList>" + nl + list + indent(2) + "</\(p)bucketList>" + nl
        }
        if let place = t.relationships[1].objects.first {
            children += object("livingAccommodation", zip(["address", "placeName"], place.attributes.map(text)).map { ($0, $1) }, depth: 2)
        }
        if oddities && pick(3) == 0 { body += indent(1) + "<!-- a trip -->" + nl + indent(1) + "<?app version=\"2\"?>" + nl }
        let fields = zip(["name", "destination", "startDate", "endDate"], t.attributes[0..<4].map(text)).map { ($0, $1) }
        body += object("trip", fields, children: children, depth: 1)
    }
    let encodingName = ["UTF-8", "UTF-16", latin1 ? "ISO-8859-1" : "UTF-8"][encoding]
    var rootAttributes = marker ? " schemaVersion=\"3.0.0\"" : ""
    if namespace == 1 { rootAttributes += " xmlns=\"urn:example:trips\"" }
    if namespace == 2 { rootAttributes += " xmlns:t=\"urn:example:trips\" xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" xsi:schemaLocation=\"urn:example:trips trips.xsd\"" }
    var document = "<?xml version=\"1.0\" encoding=\"\(encodingName)\"?>" + nl
    if oddities { document += "<!-- exported -->" + nl + "<?xml-stylesheet href=\"t.xsl\" type=\"text/xsl\"?>" + nl }
    document += "<\(p)trips\(rootAttributes)>" + nl + body + "</\(p)trips>" + nl
    if oddities { document += "<!-- end -->" + nl }
    var bytes: [UInt8]
    switch encodingName {
    case "UTF-16": bytes = [0xFF, 0xFE]; for u in document.utf16 { bytes += [UInt8(u & 0xFF), UInt8(u >> 8)] }
    case "ISO-8859-1": bytes = document.unicodeScalars.map { UInt8($0.value) }
    default: bytes = Array(document.utf8)
    }
    return (bytes, dialect, ReadOptions())
}

extension String {
    /// Every non-overlapping `target`, left to right, replaced, scalar by scalar (a search by
    /// Character would miss a `]` that a combining mark joins), without Foundation.
    func replacingScalars(of target: String, with replacement: String) -> String {
        let t = Array(target.unicodeScalars), s = Array(unicodeScalars)
        var out = String.UnicodeScalarView(), i = 0
        while i < s.count {
            if i + t.count <= s.count && Array(s[i..<i + t.count]) == t {
                out.append(contentsOf: replacement.unicodeScalars); i += t.count
            } else {
                out.append(s[i]); i += 1
            }
        }
        return String(out)
    }
}
