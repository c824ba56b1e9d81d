import TripKit

// Trips, their related objects and lists: keys, values, and the end of a trip's record.

extension YAMLRecordReader {
    // MARK: - Objects

    mutating func handleObject(_ event: YAMLEvent, _ top: Int) throws -> ReadItem? {
        let field = frames[top].field
        if field >= 0 {
            frames[top].field = Frame.expectingKey
            try handleFieldValue(event, field: field, entity: frames[top].entity)
            return nil
        }
        if field == Frame.skipValue {
            frames[top].field = Frame.expectingKey
            _ = try tagKind(event)
            if event.isCollectionStart { pushSkip() }
            return nil
        }
        if field == Frame.mergeValue {
            frames[top].field = Frame.expectingKey
            let tag = try tagKind(event)
            if event.kind == .scalar {
                if !(tag == .null || (tag == .none && event.style == .plain && isYAMLNull(event.value))) {
                    builder.fail("merge key '<<' expects a mapping or a sequence of mappings, found \(describe(event))")
                }
                return nil
            }
            let x = extraIndex(top)
            if extras[x].merges == nil { extras[x].merges = [] }
            extras[x].merges!.append(event)
            var collect = Frame(.mergeCollect)
            collect.depth = 1
            frames.append(collect)
            return nil
        }
        // A key, or the mapping's end.
        switch event.kind {
        case .scalar:
            let tag = try tagKind(event)
            if event.keyCode == Self.mergeKeyCode, event.style == .plain, tag == .none || tag == .merge {
                frames[top].field = Frame.mergeValue
                return nil
            }
            let entity = frames[top].entity
            guard let f = fieldIndex(event, entity: entity) else {
                let key = event.value
                let x = extraIndex(top)
                if !extras[x].unknownGiven.contains(key) {
                    extras[x].unknownGiven.append(key)
                    builder.unknownField(key)
                } else {
                    builder.fail("field \(key.quotedForMessage) is given twice")
                }
                frames[top].field = Frame.skipValue
                return nil
            }
            let bit: UInt64 = f < 64 ? UInt64(1) << UInt64(f) : 0
            if frames[top].given & bit != 0 {
                builder.fail("field '\(event.value)' is given twice")
                frames[top].field = Frame.skipValue
                return nil
            }
            frames[top].given |= bit
            frames[top].field = f
            return nil
        case .mappingEnd:
            if frames[top].extra >= 0, let merges = extras[frames[top].extra].merges {
                extras[frames[top].extra].merges = nil
                inject(merges, into: top, end: event)
                return nil
            }
            let frame = popFrame()
            if frame.isRoot { return endRecord(event) }
            builder.endObject()
            return nil
        case .sequenceStart, .mappingStart:
            _ = try tagKind(event)
            builder.fail("expected a field name, found \(describe(event))")
            frames[top].field = Frame.skipValue
            pushSkip()
            return nil
        default:
            return nil
        }
    }

    private mutating func handleFieldValue(_ event: YAMLEvent, field: Int, entity: Int) throws {
        let kind = fieldKinds[entity][field]
        switch event.kind {
        case .scalar:
            if let token = try token(event, field: field, entity: entity) { builder.set(field, token) }
        case .sequenceStart:
            try expectTag(event, .seq)
            if case .toMany(let destination) = kind {
                builder.markPresent(field)
                var frame = Frame(.itemList)
                frame.entity = destination
                frame.field = field
                frames.append(frame)
                return
            }
            if kind != .transient {
                builder.fail("field '\(fieldNames[entity][field])': expected \(kind.yamlExpectation), found a sequence")
            }
            pushSkip()
        case .mappingStart:
            try expectTag(event, .map)
            if case .toOne(let destination) = kind {
                builder.beginObject(field)
                var frame = Frame(.object)
                frame.entity = destination
                frame.line = event.line; frame.column = event.column
                frames.append(frame)
                return
            }
            if kind != .transient {
                builder.fail("field '\(fieldNames[entity][field])': expected \(kind.yamlExpectation), found a mapping")
            }
            pushSkip()
        default:
            break
        }
    }

    mutating func handleItemList(_ event: YAMLEvent, _ top: Int) throws {
        let field = frames[top].field
        switch event.kind {
        case .sequenceEnd:
            popFrame()
        case .mappingStart:
            try expectTag(event, .map)
            builder.beginObject(field)
            var frame = Frame(.object)
            frame.entity = frames[top].entity
            frame.line = event.line; frame.column = event.column
            frames.append(frame)
        case .scalar:
            _ = try tagKind(event)
            builder.fail("field '\(fieldNames[frames[top - 1].entity][field])': expected an object in the list, found \(describe(event))")
        case .sequenceStart:
            _ = try tagKind(event)
            builder.fail("field '\(fieldNames[frames[top - 1].entity][field])': expected an object in the list, found a sequence")
            pushSkip()
        default:
            break
        }
    }

    /// Ends the builder's record at the trip's mapping end; a rejection gets the trip's source
    /// text, if it was kept. (Out of line: the event loop stays as the optimizer had it.)
    @inline(never)
    private mutating func endRecord(_ end: YAMLEvent) -> ReadItem {
        let item = builder.endRecord()
        defer { events.parser.releaseSourceText() }
        guard case .rejected(var rejection) = item else { return item }
        if builder.rejectionMark != RecordBuilder.noMark {
            rejection.locate(at: RecordBuilder.lineAndColumn(ofMark: builder.rejectionMark))
        }
        rejection.text = events.parser.sourceText(from: recordStart, to: events.parser.mappingOffset(of: end))
        return .rejected(rejection)
    }

    /// The field a key names in an entity.
    @inline(__always)
    func fieldIndex(_ key: YAMLEvent, entity: Int) -> Int? {
        guard key.keyCode >= 0 else { return nil }
        let f = fieldByCode[entity][Int(key.keyCode)]
        return f >= 0 ? f : nil
    }

    private mutating func pushSkip() {
        var frame = Frame(.skip)
        frame.depth = 1
        frames.append(frame)
    }
}
