import TripKit

/// Deduplicating trips that are in a temporary file: by partitions of names (see `SpillingTrips`).
extension SpillingTrips {
    package func deduplicate(attribute: Int,
                             resolve: (DuplicateTrip, (DuplicateTrip.Side) -> ModelObject) throws -> (DuplicateResolution, SetAsideRecord?),
                             check: () throws -> Void) throws {
        if let memory = inMemory {
            let (_, entries) = try memory.deduplicateKeepingPositions(attribute: attribute, resolve: resolve, check: check)
            try appendSetAside(entries.map(\.record))
            return try accountForMemory()
        }
        var keptFiles: [SpillFile] = [], asideFiles: [SpillFile] = []
        var parts = try partitions(attribute: attribute).map(Optional.some)
        for p in parts.indices {
            let part = parts[p]!
            parts[p] = nil
            // One partition in memory, with each trip's position in the whole run.
            let memory = InMemoryTrips()
            var positions: [Int] = []
            try forEach(in: part) { trip in
                memory.putEncoded(trip.bytes, origin: trip.origin)
                positions.append(trip.sequence)
            }
            let (kept, aside) = try memory.deduplicateKeepingPositions(attribute: attribute, positions: positions,
                                                                       resolve: resolve, check: {})
            let keptFile = try SpillFile(directory: budget.directory, bufferSize: SpillPartitions.buffer)
            var k = 0
            try memory.forEachEncoded { bytes, origin in
                try writeRecord(bytes, origin: origin, sequence: positions[kept[k]], to: keptFile)
                k += 1
            }
            let asideFile = try SpillFile(directory: budget.directory, bufferSize: SpillPartitions.buffer)
            for (position, record) in aside {
                try writeSetAsideRecord(record, sequence: positions[position], to: asideFile)
            }
            keptFiles.append(keptFile)
            asideFiles.append(asideFile)
        }
        // Nothing has changed yet: a check that throws leaves the trips and the accounting as they were.
        try check()
        try replaceTrips { write in try mergeTrips(keptFiles) { trip in try write(trip) } }
        try mergeSetAside(asideFiles) { record in try appendSetAside([record]) }
    }

    package func repeatedValues(attribute: Int) throws -> Int {
        if let memory = inMemory { return memory.repeatedValues(attribute: attribute) }
        let values = RepeatedValues<[UInt8]>(budget: budget)
        try forEachSpilledTrip { trip in
            let b = trip.bytes
            try values.add(Array(b[TripBytes.valueRange(b, attribute: attribute)]))
        }
        return try values.repeatedCount()
    }

    /// The spilled trips split by a hash of a root attribute's value, each trip with its position:
    /// enough partitions that one fits in `budget.partitionBytes` in memory, with the index
    /// deduplication builds over it (about half as much again). At most `SpillPartitions.maximum`
    /// (with a result file and a file of set-aside records each, made as it is deduplicated): a
    /// partition of an input so large that 128 of them exceed `partitionBytes` each is held whole
    /// all the same.
    private func partitions(attribute: Int) throws -> [SpillFile] {
        let n = min(SpillPartitions.maximum, max(2, spilledBytes * 3 / 2 / max(budget.partitionBytes, 1) + 1))
        let parts = try SpillPartitions.make(n, in: budget.directory)
        var position = 0
        try forEachSpilledTrip { trip in
            let b = trip.bytes
            let value = UnsafeBufferPointer(rebasing: b[TripBytes.valueRange(b, attribute: attribute)])
            let p = SpillPartitions.index(of: TripBytes.hash(value), among: n)
            try writeRecord(b, origin: trip.origin, sequence: position, to: parts[p])
            position += 1
        }
        return parts
    }

    /// Merges files of trips, each in increasing position, into one sequence by position.
    private func mergeTrips(_ files: [SpillFile], _ body: (SpilledTrip) throws -> Void) throws {
        try merge(files, read: readTrip, sequence: \.sequence, body)
    }

    /// Merges files of set-aside records, each in increasing position, into one sequence by position.
    private func mergeSetAside(_ files: [SpillFile], _ body: (SetAsideRecord) throws -> Void) throws {
        try merge(files, read: readSetAsideRecord, sequence: \.sequence) { try body($0.0) }
    }

    /// A k-way merge by position of files whose records are each in increasing position (k is at
    /// most `SpillPartitions.maximum`: a scan for the smallest head is enough).
    private func merge<Record>(_ files: [SpillFile], read: (inout SpillReader) throws -> Record?,
                               sequence: (Record) -> Int, _ body: (Record) throws -> Void) throws {
        var readers = try files.map { file -> SpillReader in try file.flush(); return file.reader(bufferSize: SpillPartitions.buffer) }
        var heads = try readers.indices.map { try read(&readers[$0]) }
        while true {
            var best = -1
            for i in heads.indices {
                if let h = heads[i], best < 0 || sequence(h) < sequence(heads[best]!) { best = i }
            }
            guard best >= 0 else { return }
            try body(heads[best]!)
            heads[best] = try read(&readers[best])
        }
    }
}
