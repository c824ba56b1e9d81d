// Merge keys (`<<`): the keys a mapping merges in, read after its own.

extension YAMLRecordReader {
    // MARK: - Merge keys

    /// Queues the merged keys the mapping does not give itself, then the mapping's end again.
    /// Earlier sources win over later ones; a source's own `<<` is merged on the next pass, so its
    /// keys only fill what is still missing.
    mutating func inject(_ merges: [YAMLEvent], into top: Int, end: YAMLEvent) {
        var out: [YAMLEvent] = []
        var taken: [String] = []
        let entity = frames[top].entity
        var i = 0
        func nodeEnd(_ start: Int) -> Int {
            guard merges[start].isCollectionStart else { return start + 1 }
            var depth = 0, j = start
            repeat {
                if merges[j].isCollectionStart { depth += 1 } else if merges[j].isCollectionEnd { depth -= 1 }
                j += 1
            } while depth > 0
            return j
        }
        var sources: [Int] = []
        while i < merges.count {
            let end = nodeEnd(i)
            if merges[i].kind == .mappingStart {
                sources.append(i)
            } else {
                // A sequence of mappings.
                var j = i + 1
                while j < end - 1 {
                    let childEnd = nodeEnd(j)
                    if merges[j].kind == .mappingStart { sources.append(j) }
                    else { builder.fail("merge key '<<' expects a mapping or a sequence of mappings, found a sequence holding \(describe(merges[j]))") }
                    j = childEnd
                }
            }
            i = end
        }
        for source in sources {
            var j = source + 1
            while merges[j].kind != .mappingEnd {
                let keyEnd = nodeEnd(j)
                let valueEnd = nodeEnd(keyEnd)
                let key = merges[j]
                defer { j = valueEnd }
                guard key.kind == .scalar else { continue }
                if !(key.keyCode == Self.mergeKeyCode && key.style == .plain) {
                    if taken.contains(key.value) { continue }
                    if let f = fieldIndex(key, entity: entity) {
                        if f < 64, frames[top].given & (UInt64(1) << UInt64(f)) != 0 { continue }
                    } else if frames[top].extra >= 0, extras[frames[top].extra].unknownGiven.contains(key.value) {
                        continue
                    }
                    taken.append(key.value)
                }
                out.append(contentsOf: merges[j..<valueEnd])
            }
        }
        out.append(end)
        injections.append((out, 0))
    }
}
