import TripKit

/// Reads trips from JSON or JSON Lines, streaming, in any schema version.
///
/// JSON (`.json`) is the wrapper `{"schemaVersion": "3.0.0", "trips": [...]}` (its `schemaVersion`
/// is the version marker, before or after `trips`), a bare array of trips, or one trip object. A
/// top-level object is the wrapper when its first key is `schemaVersion` or `trips`. A syntax error
/// stops the read (`trips.json:1:9812: expected ',' or ']' after an array element, found '}'`); an
/// element that is not a trip object, or a trip the schema refuses, is yielded as a rejection.
///
/// JSON Lines (`.jsonl`, `.ndjson`) is one trip object per line; blank lines are skipped, and a line
/// that does not parse is yielded as a rejection (`LINE:COLUMN: reason`), since the next newline
/// starts afresh.
///
/// ```swift
/// var reader = try JSONRecordReader(.file("trips.json"), format: .json)
/// while let item = try reader.next() {
///     if case .trip(let record) = item { print(record.object.attributes[0]) }
/// }
/// print(reader.detection.version)   // 3.0.0, from the wrapper's marker
/// ```
public struct JSONRecordReader: RecordReader {
    var scanner: JSONScanner
    var builder: RecordBuilder
    let name: String
    let isLines: Bool
    /// Per vocabulary entity, its field names as bytes.
    let tables: [JSONFieldTable]

    enum Phase: Equatable {
        case start
        /// Inside the array of trips, before its first element or after one.
        case elements(first: Bool)
        /// Inside the wrapper object, after a member.
        case wrapperMembers
        /// After the top-level value: only whitespace may follow.
        case trailing
        case done
    }

    var phase = Phase.start
    var failure: (any Error)?
    var recordCount = 0
    /// The containers around a trip object's `{`: 1 in a bare array, 2 in the wrapper's array.
    var tripsDepth = 1
    var isWrapped = false
    var sawMarker = false
    var sawTrips = false

    /// Opens an input as JSON (`format: .json`) or JSON Lines (`.jsonl`).
    public init(_ input: InputLocation, format: Format = .json, options: ReadOptions = ReadOptions()) throws {
        try self.init(ByteInput(input, options: options), format: format, options: options)
    }

    /// Reads an opened input as JSON or JSON Lines.
    init(_ bytes: ByteInput, format: Format, options: ReadOptions) throws {
        guard format == .json || format == .jsonl else {
            throw TripError.usage("the JSON reader reads json or jsonl, not \(format.rawValue)")
        }
        var encoding = try TextEncoding.of(options)
        // A byte order mark is unambiguous: it is read whatever --input-encoding says, as CSV's is.
        let head = try bytes.peek(4)
        if (head.starts(with: [0xFF, 0xFE]) && !head.starts(with: [0xFF, 0xFE, 0, 0])) || head.starts(with: [0xFE, 0xFF]) {
            encoding = .utf16
        } else if head.starts(with: [0xEF, 0xBB, 0xBF]) {
            encoding = .utf8
        }
        self.init(name: bytes.name, format: format, options: options, encoding: encoding) { try bytes.read(into: $0) }
        builder.compression = bytes.compression?.rawValue
    }

    /// A reader of any byte source in `encoding` (the options' `inputEncoding`, which the caller has
    /// read: `TextEncoding.of`); tests use a small `chunkSize` to split tokens across chunks.
    init(name: String, format: Format, options: ReadOptions = ReadOptions(), encoding: TextEncoding = .utf8,
         chunkSize: Int = 1 << 16, limits: JSONLimits = .standard, source: @escaping JSONScanner.Source) {
        // Latin-1 the scanner reads itself; Windows-1252 and UTF-16 go through the transcoding layer.
        var source = source
        switch encoding {
        case .windows1252, .utf16, .utf16le, .utf16be:
            source = TranscodingSource(name: name, encoding: encoding, detectsBOM: false, source: source).read
        case .utf8, .latin1:
            break
        }
        scanner = JSONScanner(limits: limits, chunkSize: chunkSize, isLatin1: encoding == .latin1, source: source)
        builder = RecordBuilder(source: name, format: format.rawValue, options: options)
        self.name = name
        isLines = format == .jsonl
        tables = builder.vocabulary.entities.map(JSONFieldTable.init)
    }

    /// The input's version and the evidence for it; final once `next()` has returned nil.
    public var detection: Detection { builder.detection }

    /// The next trip or rejection; nil at the end of input, and again after that.
    public mutating func next() throws -> ReadItem? {
        if let failure { throw failure }
        do {
            return try isLines ? nextLine() : nextInDocument()
        } catch let e as JSONSyntaxError {
            let error = TripError.data("\(name):\(e.line):\(e.column): \(e.message)")
            failure = error
            throw error
        } catch {
            failure = error
            throw error
        }
    }

    static let documentExpectation = #"an array of trips, a trip object or {"schemaVersion", "trips"}"#

    // MARK: - JSON documents

    private mutating func nextInDocument() throws -> ReadItem? {
        while true {
            switch phase {
            case .start:
                try scanner.skipByteOrderMark()
                guard let b = try scanner.peek() else { throw scanner.unexpected(Self.documentExpectation) }
                if b == 0x5B {
                    scanner.pos += 1
                    tripsDepth = 1
                    phase = .elements(first: true)
                } else if b == 0x7B {
                    if let item = try readTopLevelObject() { return item }
                } else {
                    try refuseTopLevelValue(b)
                }
            case .elements(let first):
                guard var b = try scanner.peek() else {
                    throw scanner.unexpected(first ? "a trip object or ']'" : "',' or ']' after an array element")
                }
                if b == 0x5D {
                    scanner.pos += 1
                    phase = isWrapped ? .wrapperMembers : .trailing
                    continue
                }
                if !first {
                    guard b == 0x2C else { throw scanner.unexpected("',' or ']' after an array element") }
                    scanner.pos += 1
                    guard let c = try scanner.peek() else { throw scanner.unexpected("a trip object") }
                    b = c
                }
                phase = .elements(first: false)
                return try readElement(b)
            case .wrapperMembers:
                guard let c = try scanner.peek(), c == 0x2C || c == 0x7D else {
                    throw scanner.unexpected("',' or '}' after a member of the wrapper object")
                }
                scanner.pos += 1
                if c == 0x7D {
                    guard sawTrips else {
                        throw scanner.error(#"the wrapper object has no "trips" array"#, at: scanner.pos - 1)
                    }
                    phase = .trailing
                    continue
                }
                guard try scanner.peek() == 0x22 else { throw scanner.unexpected("a key of the wrapper object") }
                let column = scanner.column(at: scanner.pos)
                let key = try scanner.readString()
                try readWrapperMember(key, column: column)
            case .trailing:
                if try scanner.peek() != nil { throw scanner.unexpected("the end of input after the JSON value") }
                phase = .done
            case .done:
                return nil
            }
        }
    }

    /// A top-level `{`: the wrapper, or one trip. Returns the trip's item, or nil for the wrapper.
    private mutating func readTopLevelObject() throws -> ReadItem? {
        let origin = makeOrigin(record: 1)
        scanner.pinRecord(at: scanner.pos)
        scanner.pos += 1
        guard let b = try scanner.peek() else { throw scanner.unexpected("an object key or '}'") }
        phase = .trailing
        recordCount = 1
        if b == 0x7D {
            // `{}`: one trip that gives nothing.
            scanner.pos += 1
            builder.beginRecord(origin: origin)
            return finishRecord()
        }
        guard b == 0x22 else { throw scanner.unexpected("an object key (a string)") }
        let column = scanner.column(at: scanner.pos)
        let key = try scanner.readString()
        if JSONFieldTable.equals(key, "schemaVersion") || JSONFieldTable.equals(key, "trips") {
            scanner.unpin()
            recordCount = 0
            isWrapped = true
            tripsDepth = 2
            try readWrapperMember(key, column: column)
            return nil
        }
        builder.beginRecord(origin: origin)
        try readMembers(entity: builder.vocabulary.rootEntity, depth: 1, firstKey: key)
        return finishRecord()
    }

    /// A member of the wrapper object, its key read; sets the phase that follows it.
    private mutating func readWrapperMember(_ key: UnsafeRawBufferPointer, column: Int) throws {
        let isMarker = JSONFieldTable.equals(key, "schemaVersion")
        guard isMarker || JSONFieldTable.equals(key, "trips") else {
            let text = String(decoding: key, as: UTF8.self)
            throw JSONSyntaxError(line: scanner.line, column: column,
                                  message: #"unexpected key \#(text.quotedForMessage) in the wrapper object; expected "schemaVersion" or "trips""#)
        }
        if isMarker ? sawMarker : sawTrips {
            throw JSONSyntaxError(line: scanner.line, column: column,
                                  message: "\"\(isMarker ? "schemaVersion" : "trips")\" is given twice in the wrapper object")
        }
        guard try scanner.peek() == 0x3A else { throw scanner.unexpected("':' after an object key") }
        scanner.pos += 1
        guard let v = try scanner.peek() else { throw scanner.unexpected("a JSON value") }
        if isMarker {
            sawMarker = true
            let place = "\(name):\(scanner.line):\(scanner.column(at: scanner.pos))"
            let text: String
            switch v {
            case 0x22: text = String(decoding: try scanner.readString(), as: UTF8.self)
            case 0x2D, 0x30...0x39: text = String(decoding: try scanner.readNumber(), as: UTF8.self)
            default:
                throw scanner.error(#"expected a version such as "3.0.0" for "schemaVersion", found \#(JSONScanner.kindOfValue(startingWith: v))"#,
                                    at: scanner.pos)
            }
            try builder.setMarker(text, place: place)
            phase = .wrapperMembers
        } else {
            sawTrips = true
            guard v == 0x5B else {
                throw scanner.error(#"expected an array of trips for "trips", found \#(JSONScanner.kindOfValue(startingWith: v))"#,
                                    at: scanner.pos)
            }
            scanner.pos += 1
            phase = .elements(first: true)
        }
    }

    /// Valid JSON that is not trips: say what was expected, unless the rest is not valid JSON.
    private mutating func refuseTopLevelValue(_ b: UInt8) throws -> Never {
        let line = scanner.line, column = scanner.column(at: scanner.pos)
        let kind = JSONScanner.kindOfValue(startingWith: b)
        switch b {
        case 0x22, 0x2D, 0x30...0x39, 0x74, 0x66, 0x6E: break
        default: throw scanner.unexpected(Self.documentExpectation)
        }
        try scanner.skipValue(depth: 0)
        if try scanner.peek() != nil { throw scanner.unexpected("the end of input after the JSON value") }
        throw JSONSyntaxError(line: line, column: column, message: "expected \(Self.documentExpectation), found \(kind)")
    }

    /// An element of the array of trips, starting with `b` at `pos`.
    private mutating func readElement(_ b: UInt8) throws -> ReadItem {
        recordCount += 1
        let origin = makeOrigin(record: recordCount)
        scanner.pinRecord(at: scanner.pos)
        if b == 0x7B {
            scanner.pos += 1
            builder.beginRecord(origin: origin)
            try readMembers(entity: builder.vocabulary.rootEntity, depth: tripsDepth + 1, firstKey: nil)
            return finishRecord()
        }
        let kind = JSONScanner.kindOfValue(startingWith: b)
        try scanner.skipValue(depth: tripsDepth)
        return .rejected(SetAsideRecord(origin: origin, reason: "expected a trip object, found \(kind)",
                                        text: scanner.takePinnedText()))
    }

    /// Ends the builder's record; a rejection gets the record's text, if it was kept.
    private mutating func finishRecord() -> ReadItem {
        let item = builder.endRecord(text: nil)
        guard case .rejected(var rejection) = item else {
            scanner.unpin()
            return item
        }
        locate(&rejection)
        rejection.text = scanner.takePinnedText()
        return .rejected(rejection)
    }

    /// Places a rejection at the value or object the builder rejected it for, where it has one.
    private func locate(_ rejection: inout SetAsideRecord) {
        let mark = builder.rejectionMark
        if mark != RecordBuilder.noMark { rejection.locate(at: RecordBuilder.lineAndColumn(ofMark: mark)) }
    }

    private func makeOrigin(record: Int) -> RecordOrigin {
        RecordOrigin(source: name, record: record, line: scanner.line, column: scanner.column(at: scanner.pos))
    }

    // MARK: - JSON Lines

    private mutating func nextLine() throws -> ReadItem? {
        if phase == .start {
            try scanner.skipByteOrderMark()
            phase = .elements(first: true)
        }
        while true {
            if phase == .done { return nil }
            if try scanner.isAtEnd() {
                phase = .done
                return nil
            }
            guard let lineEnd = try scanner.loadLine() else {
                recordCount += 1
                let origin = RecordOrigin(source: name, record: recordCount, line: scanner.line, column: 1)
                try scanner.skipLine()
                return .rejected(SetAsideRecord(origin: origin, reason: "a line longer than \(JSONLimits.describe(bytes: scanner.limits.maxLineBytes))"))
            }
            let lineStart = scanner.pos
            let hasNewline = lineEnd < scanner.end
            scanner.bound(to: lineEnd)
            guard let b = try scanner.peek() else {
                finishLine(lineEnd, hasNewline: hasNewline)
                continue
            }
            recordCount += 1
            let origin = makeOrigin(record: recordCount)
            var item: ReadItem
            do {
                if b == 0x7B {
                    scanner.pos += 1
                    builder.beginRecord(origin: origin)
                    try readMembers(entity: builder.vocabulary.rootEntity, depth: 1, firstKey: nil)
                    if try scanner.peek() != nil { throw scanner.unexpected("the end of the line after the trip object") }
                    item = builder.endRecord(text: nil)
                    if case .rejected(var rejection) = item {
                        locate(&rejection)
                        item = .rejected(rejection)
                    }
                } else {
                    let kind = JSONScanner.kindOfValue(startingWith: b)
                    try scanner.skipValue(depth: 0)
                    if try scanner.peek() != nil { throw scanner.unexpected("the end of the line after the JSON value") }
                    item = .rejected(SetAsideRecord(origin: origin, reason: "expected a trip object, found \(kind)"))
                }
            } catch let e as JSONSyntaxError {
                // The place of a line that does not parse is where it stops parsing.
                var at = origin
                at.line = e.line
                at.column = e.column
                item = .rejected(SetAsideRecord(origin: at, reason: e.message))
            }
            if case .rejected(var rejection) = item {
                var stop = lineEnd
                if stop > lineStart, scanner.base[stop - 1] == 0x0D { stop -= 1 }
                rejection.text = scanner.text(from: lineStart, to: stop)
                item = .rejected(rejection)
            }
            finishLine(lineEnd, hasNewline: hasNewline)
            return item
        }
    }

    private mutating func finishLine(_ lineEnd: Int, hasNewline: Bool) {
        scanner.unbound(movingTo: hasNewline ? lineEnd + 1 : lineEnd)
        if hasNewline { scanner.noteNewline() }
    }
}
