internal import CYAML
import TripKit
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One parse event, in Swift terms: what libyaml's `yaml_event_t` says, copied out of C memory.
struct YAMLEvent {
    enum Kind: UInt8 {
        case streamStart, streamEnd, documentStart, documentEnd
        case sequenceStart, sequenceEnd, mappingStart, mappingEnd
        case scalar, alias
    }

    /// How a scalar was written; the schema reads plain scalars as text and quoted ones as strings.
    enum Style: UInt8 { case plain, singleQuoted, doubleQuoted, literal, folded, none }

    var kind: Kind
    var style: Style = .none
    /// A scalar whose text is a name in the parser's key table: its code there, else -1.
    var keyCode: Int16 = -1
    /// 0-based, as libyaml counts; messages add one.
    var line: Int32 = 0
    var column: Int32 = 0
    /// For an alias that was recorded inside an anchored node: the recording it replays.
    var aliasTarget: Int32 = -1
    /// A scalar's text; an alias's anchor name.
    var value: String = ""
    /// The anchor and tag, which few nodes have: one reference, nil for most events.
    var properties: YAMLNodeProperties? = nil

    var anchor: String? { properties?.anchor }
    /// The resolved tag (`tag:yaml.org,2002:str`, `!`, `!local`), if the node has one.
    var tag: String? { properties?.tag }

    init(kind: Kind) { self.kind = kind }

    var isCollectionStart: Bool { kind == .sequenceStart || kind == .mappingStart }
    var isCollectionEnd: Bool { kind == .sequenceEnd || kind == .mappingEnd }
}

/// The bounds every YAML input is read under.
struct YAMLLimits {
    /// Nesting of sequences and mappings, counted through aliases.
    var maxDepth = 256
    /// Bytes of one scalar.
    var maxScalarBytes = 1 << 20
    /// Bytes libyaml may read without producing an event (a scalar, comment or key that never ends).
    var maxBytesWithoutEvent = 4 << 20
    /// Events that aliases may replay: this many, plus `aliasReplayPerEvent` for every event parsed.
    var aliasReplayBase = 100_000
    var aliasReplayPerEvent = 10
    /// Events kept for anchored nodes in one document.
    var maxAnchoredEvents = 1_000_000
    /// A rejected trip's text longer than this (in bytes) is not kept.
    var maxRecordTextBytes = 1 << 20
    /// Whether an input that can be read twice, and fits the block subset, is read by
    /// `YAMLBlockScanner` instead of libyaml (false: always libyaml, for comparisons).
    var usesBlockScanner = true
}

/// libyaml's event parser, fed chunk by chunk from a `ByteInput` through a read handler; or, for
/// an input that fits the block subset and can be read twice, `YAMLBlockScanner`, which gives the
/// same events (see YAMLBlockScanner.swift). The choice is made at the first event.
///
/// C error codes become `TripError.data("FILE:LINE:COLUMN: problem")` here, and nowhere else.
final class YAMLEventParser {
    let name: String
    private let input: ByteInput?
    // The parser's state is touched for every event and every chunk: no dynamic exclusivity
    // checks (the class is used from one place at a time, and libyaml calls back synchronously).
    @exclusivity(unchecked) private var pending: [UInt8]?
    @exclusivity(unchecked) private var pendingOffset = 0
    private let parser: UnsafeMutablePointer<yaml_parser_t>
    private let event: UnsafeMutablePointer<yaml_event_t>
    @exclusivity(unchecked) private var inputError: Error?
    @exclusivity(unchecked) private var failure: Error?
    @exclusivity(unchecked) private var finished = false
    let limits: YAMLLimits
    /// Names to give key codes to, set before the first event.
    var keyTable: YAMLKeyTable?
    /// The one-event batch of `next()`.
    @exclusivity(unchecked) private var scratch = YAMLEventBatch()
    private let maxScalarBytes: Int
    private let maxBytesWithoutEvent: Int
    /// Bytes handed to libyaml since the last event it produced.
    @exclusivity(unchecked) fileprivate var bytesSinceEvent = 0
    @exclusivity(unchecked) fileprivate var tooMuchWithoutEvent = false
    /// The input handed to libyaml, and byte offsets for mappings' marks.
    @exclusivity(unchecked) private var source: YAMLSourceMap
    /// The block-subset scanner, when the input fits it; decided at the first event.
    @exclusivity(unchecked) private var fast: YAMLBlockScanner?
    @exclusivity(unchecked) private var decided = false
    /// `next()`'s place in `scratch` when the scanner fills it a line at a time.
    @exclusivity(unchecked) private var scratchPosition = 0

    /// Whether the block-subset scanner reads this input (known after the first event).
    var readsWithBlockScanner: Bool { fast != nil }

    /// Reads from an input.
    convenience init(input: ByteInput, limits: YAMLLimits = YAMLLimits()) {
        self.init(name: input.name, input: input, bytes: nil, limits: limits)
    }

    /// Reads from bytes in memory (for tests and small documents).
    convenience init(bytes: [UInt8], name: String, limits: YAMLLimits = YAMLLimits()) {
        self.init(name: name, input: nil, bytes: bytes, limits: limits)
    }

    private init(name: String, input: ByteInput?, bytes: [UInt8]?, limits: YAMLLimits) {
        self.name = name
        self.input = input
        self.pending = bytes
        self.limits = limits
        maxScalarBytes = limits.maxScalarBytes
        maxBytesWithoutEvent = limits.maxBytesWithoutEvent
        source = YAMLSourceMap(maxKeptBytes: limits.maxRecordTextBytes)
        event = .allocate(capacity: 1)
        event.initialize(to: yaml_event_t())
        parser = .allocate(capacity: 1)
        yaml_parser_initialize(parser)
        yaml_parser_set_input(parser, yamlReadHandler, Unmanaged.passUnretained(self).toOpaque())
    }

    deinit {
        yaml_parser_delete(parser)
        parser.deallocate()
        event.deallocate()
    }

    /// `FILE:LINE:COLUMN` for a 0-based line and column.
    func place(_ line: Int32, _ column: Int32) -> String { "\(name):\(line + 1):\(column + 1)" }
    func place(of event: YAMLEvent) -> String { place(event.line, event.column) }

    /// The next event; after the stream's end, the stream's end again. An error is thrown again on
    /// every later call.
    func next() throws -> YAMLEvent {
        if !decided { try decide() }
        if let fast {
            lastInput = YAMLBatchInput(lowMark: fast.lowMark)
            if scratchPosition >= scratch.events.count {
                scratch.events.removeAll(keepingCapacity: true)
                scratch.bytes.removeAll()
                scratchPosition = 0
                _ = try parseFast(fast, into: &scratch)
                fast.seal(into: &lastInput)
            }
            scratchPosition += 1
            return scratch.event(at: scratchPosition - 1, keyTable: keyTable)
        }
        scratch.events.removeAll(keepingCapacity: true)
        scratch.bytes.removeAll()
        lastInput = YAMLBatchInput(lowMark: source.lowMark)
        _ = try parse(into: &scratch)
        seal(into: &lastInput)
        return scratch.event(at: 0, keyTable: keyTable)
    }

    /// The input read while `next()` parsed its last event.
    @exclusivity(unchecked) private(set) var lastInput = YAMLBatchInput(lowMark: 0)

    /// As `YAMLEventBatch.mappingOffset(at:of:)`, for the event `next()` gave last.
    func mappingOffset(of event: YAMLEvent) -> Int {
        if fast != nil {
            return scratchPosition > 0 && scratchPosition <= scratch.events.count
                ? scratch.mappingOffset(at: scratchPosition - 1, of: event) : -1
        }
        return scratch.events.isEmpty ? -1 : scratch.mappingOffset(at: 0, of: event)
    }

    /// Parses the next event into a batch, as raw bytes (no string is made here, so that a parse
    /// thread does as little as it can); its kind. After the stream's end, the stream's end again;
    /// an error is thrown again on every later call.
    func parse(into batch: inout YAMLEventBatch) throws -> YAMLEvent.Kind {
        if let failure { throw failure }
        if !decided { try decide() }
        if let fast { return try parseFast(fast, into: &batch) }
        if finished {
            batch.events.append(YAMLRawEvent(kind: .streamEnd))
            return .streamEnd
        }
        guard yaml_parser_parse(parser, event) != 0 else {
            let error = makeError()
            failure = error
            throw error
        }
        defer { yaml_event_delete(event) }
        bytesSinceEvent = 0
        let event = self.event.pointee
        var out: YAMLRawEvent
        switch event.type.rawValue {
        case YAML_STREAM_START_EVENT.rawValue: out = YAMLRawEvent(kind: .streamStart)
        case YAML_STREAM_END_EVENT.rawValue:
            out = YAMLRawEvent(kind: .streamEnd)
            finished = true
        case YAML_DOCUMENT_START_EVENT.rawValue: out = YAMLRawEvent(kind: .documentStart)
        case YAML_DOCUMENT_END_EVENT.rawValue: out = YAMLRawEvent(kind: .documentEnd)
        case YAML_SEQUENCE_START_EVENT.rawValue:
            out = YAMLRawEvent(kind: .sequenceStart)
            out.properties = properties(event.data.sequence_start.anchor, event.data.sequence_start.tag)
        case YAML_SEQUENCE_END_EVENT.rawValue: out = YAMLRawEvent(kind: .sequenceEnd)
        case YAML_MAPPING_START_EVENT.rawValue:
            out = YAMLRawEvent(kind: .mappingStart)
            out.properties = properties(event.data.mapping_start.anchor, event.data.mapping_start.tag)
            out.textStart = source.mappingStart(Int(event.start_mark.index), scanPosition)
        case YAML_MAPPING_END_EVENT.rawValue:
            out = YAMLRawEvent(kind: .mappingEnd)
            out.textStart = source.mappingEnd(start: Int(event.start_mark.index), end: Int(event.end_mark.index),
                                              endLine: Int(event.end_mark.line), scanPosition)
        case YAML_SCALAR_EVENT.rawValue:
            out = YAMLRawEvent(kind: .scalar)
            let scalar = event.data.scalar
            if scalar.length > maxScalarBytes {
                let error = TripError.data("\(place(Int32(clamping: event.start_mark.line), Int32(clamping: event.start_mark.column))): scalar of \(scalar.length) bytes is longer than the limit of \(maxScalarBytes)")
                failure = error
                throw error
            }
            if scalar.length > 0, let p = scalar.value {
                out.textStart = batch.bytes.count
                out.textCount = Int32(scalar.length)
                batch.bytes.append(p, count: scalar.length)
            }
            if scalar.anchor != nil || scalar.tag != nil { out.properties = properties(scalar.anchor, scalar.tag) }
            switch scalar.style.rawValue {
            case YAML_SINGLE_QUOTED_SCALAR_STYLE.rawValue: out.style = .singleQuoted
            case YAML_DOUBLE_QUOTED_SCALAR_STYLE.rawValue: out.style = .doubleQuoted
            case YAML_LITERAL_SCALAR_STYLE.rawValue: out.style = .literal
            case YAML_FOLDED_SCALAR_STYLE.rawValue: out.style = .folded
            default: out.style = .plain
            }
        case YAML_ALIAS_EVENT.rawValue:
            out = YAMLRawEvent(kind: .alias)
            if let p = event.data.alias.anchor {
                let n = strlen(UnsafeRawPointer(p).assumingMemoryBound(to: CChar.self))
                out.textStart = batch.bytes.count
                out.textCount = Int32(clamping: n)
                batch.bytes.append(p, count: n)
            }
        default:
            out = YAMLRawEvent(kind: .streamEnd)
            finished = true
        }
        out.line = Int32(clamping: event.start_mark.line)
        out.column = Int32(clamping: event.start_mark.column)
        source.noteEvent(start: Int(event.start_mark.index), end: Int(event.end_mark.index),
                         endLine: Int(event.end_mark.line), endColumn: Int(event.end_mark.column))
        batch.events.append(out)
        return out.kind
    }

    // MARK: - The block-subset scanner

    /// Reads the whole input once with the block-subset scanner and, if it fits, reads it with
    /// that scanner from the start; otherwise with libyaml, also from the start.
    private func decide() throws {
        decided = true
        guard limits.usesBlockScanner else { return }
        let source: YAMLBlockScanner.Source
        if let input {
            guard input.canRewind else { return }
            source = .input(input)
            input.beginCheckPass()
        } else if let pending, pendingOffset == 0 {
            source = .bytes(pending)
        } else {
            return
        }
        let fits = YAMLBlockScanner(source: source, limits: limits).fits()
        if let input, !input.rewindForSecondPass() {
            let error = TripError(.io, "\(name): cannot go back to the start of the input to read it")
            failure = error
            throw error
        }
        if fits { fast = YAMLBlockScanner(source: source, limits: limits) }
    }

    /// The scanner's events for one line; it read the whole input before without finding anything
    /// outside the subset, so finding something now means the input changed meanwhile.
    private func parseFast(_ fast: YAMLBlockScanner, into batch: inout YAMLEventBatch) throws -> YAMLEvent.Kind {
        if let failure { throw failure }
        do {
            return try fast.parse(into: &batch)
        } catch is YAMLBlockScanner.OutsideSubset {
            let error = TripError.data("\(name): the input changed while it was read (it was read twice: once to choose a parser)")
            failure = error
            throw error
        } catch {
            failure = error
            throw error
        }
    }

    // MARK: - Source text

    /// Where libyaml's scanner is, in characters and in bytes.
    private var scanPosition: YAMLScanPosition {
        var decodedAhead = parser.pointee.buffer.last - parser.pointee.buffer.pointer
        // At the end of input libyaml ends its buffer with a NUL that is no byte of the input
        // (the input cannot hold a NUL: libyaml refuses control characters).
        if parser.pointee.eof != 0, let p = parser.pointee.buffer.pointer {
            while decodedAhead > 0 && p[decodedAhead - 1] == 0 { decodedAhead -= 1 }
        }
        return YAMLScanPosition(character: Int(parser.pointee.mark.index), byte: Int(parser.pointee.offset) - decodedAhead,
                                isUTF8: parser.pointee.encoding == YAML_UTF8_ENCODING)
    }

    /// Bytes of input read since the last `seal`.
    var unsealedInputBytes: Int { fast?.unsealedInputBytes ?? source.unsealedCount }

    /// No offset given from now on is below this.
    var lowMark: Int { fast?.lowMark ?? source.lowMark }

    /// Adds to a batch's input what was read while its events were parsed.
    func seal(into input: inout YAMLBatchInput) {
        if let fast { return fast.seal(into: &input) }
        if let segment = source.seal(scanPosition) { input.segments.append(segment) }
    }

    private func properties(_ anchor: UnsafeMutablePointer<yaml_char_t>?, _ tag: UnsafeMutablePointer<yaml_char_t>?) -> YAMLNodeProperties? {
        if anchor == nil && tag == nil { return nil }
        return YAMLNodeProperties(anchor: string(anchor), tag: string(tag))
    }

    private func string(_ p: UnsafeMutablePointer<yaml_char_t>?) -> String? {
        guard let p else { return nil }
        return String(cString: p)
    }

    private func makeError() -> Error {
        if let inputError { return inputError }
        let p = parser.pointee
        if tooMuchWithoutEvent {
            return TripError.data("\(place(Int32(clamping: p.mark.line), Int32(clamping: p.mark.column))): more than \(limits.maxBytesWithoutEvent) bytes without a complete YAML node (a scalar, key or comment too long)")
        }
        let problem = p.problem.map { String(cString: $0) } ?? "unknown problem"
        switch p.error {
        case YAML_MEMORY_ERROR:
            return TripError.data("\(name): out of memory while parsing YAML")
        case YAML_READER_ERROR:
            let at = readerErrorPosition()
            var message = "\(place(Int32(clamping: at.line), Int32(clamping: at.column))): \(problem)"
            if p.problem_value != -1 { message += " (0x\(String(UInt32(bitPattern: p.problem_value), radix: 16)))" }
            return TripError.data(message, notes: ["YAML input must be UTF-8 or UTF-16"])
        default:
            let mark = p.problem_mark
            var message = "\(place(Int32(clamping: mark.line), Int32(clamping: mark.column))): \(problem)"
            if let context = p.context {
                let c = p.context_mark
                message += " (\(String(cString: context)) at \(c.line + 1):\(c.column + 1))"
            }
            return TripError.data(message)
        }
    }

    /// Where libyaml's reader stopped, 0-based: its scanner's mark moved over the characters the
    /// reader decoded ahead of it, up to the one it could not decode (libyaml gives only a byte
    /// offset). Counted only for the error.
    private func readerErrorPosition() -> (line: Int, column: Int) {
        let p = parser.pointee
        var line = Int(p.mark.line), column = Int(p.mark.column)
        guard var q = p.buffer.pointer, let last = p.buffer.last, q <= last else { return (line, column) }
        while q < last {
            let c = q.pointee
            if c == 0x0A || (c == 0x0D && !(q + 1 < last && q[1] == 0x0A)) {
                line += 1
                column = 0
            } else if c & 0xC0 != 0x80 && c != 0x0D {
                column += 1
            }
            q += 1
        }
        return (line, column)
    }

    /// Fills libyaml's buffer; 0 bytes is the end of input.
    fileprivate func read(into buffer: UnsafeMutablePointer<UInt8>, size: Int) -> Int? {
        if bytesSinceEvent > maxBytesWithoutEvent {
            tooMuchWithoutEvent = true
            return nil
        }
        if let input {
            do {
                let n = try input.read(into: UnsafeMutableRawBufferPointer(start: buffer, count: size))
                bytesSinceEvent += n
                source.append(UnsafeBufferPointer(start: buffer, count: n))
                return n
            } catch {
                inputError = error
                return nil
            }
        }
        guard let bytes = pending else { return 0 }
        let n = min(size, bytes.count - pendingOffset)
        if n > 0 {
            bytes.withUnsafeBufferPointer { src in
                buffer.update(from: src.baseAddress! + pendingOffset, count: n)
            }
            pendingOffset += n
        }
        bytesSinceEvent += n
        source.append(UnsafeBufferPointer(start: buffer, count: n))
        return n
    }
}

private let yamlReadHandler: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<UInt8>?, Int,
                                             UnsafeMutablePointer<Int>?) -> Int32 = { data, buffer, size, sizeRead in
    guard let data, let buffer, let sizeRead else { return 0 }
    let parser = Unmanaged<YAMLEventParser>.fromOpaque(data).takeUnretainedValue()
    guard let n = parser.read(into: buffer, size: size) else { return 0 }
    sizeRead.pointee = n
    return 1
}
