import TripKit

/// Where raw events come from: libyaml on this thread, or the pipe from libyaml on another.
protocol YAMLEventSource: AnyObject {
    var name: String { get }
    var limits: YAMLLimits { get }
    func next() throws -> YAMLEvent
}

extension YAMLEventParser: YAMLEventSource {}
extension YAMLEventPipe: YAMLEventSource {}

/// The events of a YAML stream with aliases resolved: every alias is replaced by the events of the
/// node it names, and anchors are dropped.
///
/// Anchored nodes are kept as compact event lists (one shared log per document; an alias inside an
/// anchored node is kept as a reference, not a copy), and an alias replays its node's events. Replays
/// are counted against a budget that grows with the input, so an alias bomb is refused after a
/// bounded amount of work instead of being expanded; an alias to a node that is still open (a
/// cycle) is refused. Nesting depth is counted through replays, so no input can nest deeper than
/// `YAMLLimits.maxDepth`. Everything is iterative: no input can overflow the stack.
struct YAMLNodeStream<Source: YAMLEventSource> {
    let parser: Source
    private let limits: YAMLLimits

    /// Events of anchored nodes in the current document; aliases in it carry `aliasTarget`.
    private var log: [YAMLEvent] = []
    /// Per recording: its range in `log`; `end` is -1 while the node is open.
    private var recordings: [(start: Int, end: Int)] = []
    private var anchors: [String: Int] = [:]
    /// Recordings whose node is open, with the depth at which each closes.
    private var open: [(recording: Int, depth: Int)] = []
    /// Alias replays in progress: the next position and the end in `log`.
    private var replays: [(position: Int, end: Int)] = []
    /// Where the outermost replay's alias was, for messages.
    private var replayLine: Int32 = 0, replayColumn: Int32 = 0

    private(set) var depth = 0
    private var parsedEvents = 0
    private var replayedEvents = 0

    init(parser: Source) {
        self.parser = parser
        limits = parser.limits
    }

    func place(of event: YAMLEvent) -> String { "\(parser.name):\(event.line + 1):\(event.column + 1)" }
    var name: String { parser.name }

    /// The next resolved event: never an alias, never with an anchor.
    @inline(__always)
    mutating func next() throws -> YAMLEvent {
        // The common case: no replay, no recording, a node without anchor or tag.
        if replays.isEmpty && open.isEmpty {
            var event = try parser.next()
            parsedEvents += 1
            if event.properties == nil && event.kind != .alias {
                switch event.kind {
                case .scalar: return event
                case .sequenceStart, .mappingStart, .sequenceEnd, .mappingEnd:
                    try track(&event)
                    return event
                default: break
                }
            }
            if try take(&event) { return event }
        }
        return try nextResolving()
    }

    /// The general case: replays first, then the parser's events.
    private mutating func nextResolving() throws -> YAMLEvent {
        while true {
            if !replays.isEmpty {
                let top = replays.count - 1
                var event = log[replays[top].position]
                replays[top].position += 1
                if replays[top].position == replays[top].end { replays.removeLast() }
                if event.kind == .alias {
                    let r = recordings[Int(event.aliasTarget)]
                    if r.end > r.start { replays.append((r.start, r.end)) }
                    continue
                }
                replayedEvents += 1
                if replayedEvents > limits.aliasReplayBase + limits.aliasReplayPerEvent * parsedEvents {
                    throw TripError.data("\(parser.name):\(replayLine + 1):\(replayColumn + 1): aliases expand to more than \(replayedEvents - 1) nodes, refused as an alias bomb",
                                         notes: ["an alias may replay at most \(limits.aliasReplayPerEvent) events per event of the input"])
                }
                try track(&event)
                return event
            }
            var event = try parser.next()
            parsedEvents += 1
            if try take(&event) { return event }
        }
    }

    /// Takes one event of the parser: records it for open anchors, starts a replay for an alias
    /// (then false: the replay gives the next event), and resets everything between documents.
    private mutating func take(_ event: inout YAMLEvent) throws -> Bool {
        switch event.kind {
        case .alias:
            guard let target = anchors[event.value] else {
                throw TripError.data("\(place(of: event)): alias '*\(event.value)' names no anchor before it")
            }
            let r = recordings[target]
            if r.end < 0 {
                throw TripError.data("\(place(of: event)): alias '*\(event.value)' refers to a node that contains it, a cycle")
            }
            if !open.isEmpty {
                event.aliasTarget = Int32(target)
                try append(event)
            }
            if r.end > r.start {
                replays.append((r.start, r.end))
                replayLine = event.line; replayColumn = event.column
            }
            return false
        case .documentStart, .documentEnd:
            // Anchors do not reach across documents.
            log.removeAll(); recordings.removeAll(); anchors.removeAll(); open.removeAll()
            depth = 0
            return true
        default:
            break
        }
        try track(&event)
        if event.properties != nil, let anchor = event.anchor {
            event.properties = YAMLNodeProperties.make(anchor: nil, tag: event.tag)
            anchors[anchor] = recordings.count
            recordings.append((log.count, -1))
            if event.kind == .scalar {
                try append(event)
                recordings[recordings.count - 1].end = log.count
                closeRecordings()
                return true
            }
            open.append((recordings.count - 1, depth - 1))
        }
        if !open.isEmpty {
            try append(event)
            if event.isCollectionEnd { closeRecordings() }
        }
        return true
    }

    /// Counts depth and checks it.
    @inline(__always)
    private mutating func track(_ event: inout YAMLEvent) throws {
        if event.isCollectionStart {
            depth += 1
            if depth > limits.maxDepth {
                throw TripError.data("\(place(of: event)): nesting deeper than \(limits.maxDepth) levels")
            }
        } else if event.isCollectionEnd {
            depth -= 1
        }
    }

    private mutating func append(_ event: YAMLEvent) throws {
        guard log.count < limits.maxAnchoredEvents else {
            throw TripError.data("\(place(of: event)): anchored nodes hold more than \(limits.maxAnchoredEvents) events",
                                 notes: ["anchor smaller nodes, or none"])
        }
        log.append(event)
    }

    /// Ends the recordings whose node just closed (the depth is already back at theirs).
    private mutating func closeRecordings() {
        while let last = open.last, last.depth == depth {
            recordings[last.recording].end = log.count
            open.removeLast()
        }
    }
}
