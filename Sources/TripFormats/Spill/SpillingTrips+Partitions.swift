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
        var keptCount = 0
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
            keptCount += kept.count
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
        try keepParts(keptFiles, count: keptCount)
        try mergeSetAside(asideFiles) { record in try appendSetAside([record]) }
    }

    /// Makes the kept trips' files, one per partition, the holding's trips, in one file only when
    /// needed: each is in order of position, and reading them merged gives the trips in order.
    func mergeKeptParts() throws {
        guard let parts = keptParts else { return }
        keptParts = nil
        try replaceTrips { write in try mergeTrips(parts) { trip in try write(trip) } }
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
    func mergeTrips(_ files: [SpillFile], _ body: (SpilledTrip) throws -> Void) throws {
        try merge(files, read: readTrip, sequence: \.sequence, body)
    }

    /// Merges files of set-aside records, each in increasing position, into one sequence by position.
    private func mergeSetAside(_ files: [SpillFile], _ body: (SetAsideRecord) throws -> Void) throws {
        try merge(files, read: readSetAsideRecord, sequence: \.sequence) { try body($0.0) }
    }

    /// A k-way merge by position of files whose records are each in increasing position: the
    /// files' next records in a binary heap by position (k is at most `SpillPartitions.maximum`).
    private func merge<Record>(_ files: [SpillFile], read: (inout SpillReader) throws -> Record?,
                               sequence: (Record) -> Int, _ body: (Record) throws -> Void) throws {
        var readers = try files.map { file -> SpillReader in try file.flush(); return file.reader(bufferSize: SpillPartitions.buffer) }
        var heap: [(position: Int, file: Int, record: Record)] = []
        heap.reserveCapacity(files.count)
        func siftDown(_ start: Int) {
            var i = start
            while true {
                let l = 2 * i + 1, r = l + 1
                var least = i
                if l < heap.count, heap[l].position < heap[least].position { least = l }
                if r < heap.count, heap[r].position < heap[least].position { least = r }
                if least == i { return }
                heap.swapAt(i, least)
                i = least
            }
        }
        for f in readers.indices {
            if let record = try read(&readers[f]) { heap.append((sequence(record), f, record)) }
        }
        for i in stride(from: heap.count / 2 - 1, through: 0, by: -1) { siftDown(i) }
        while let top = heap.first {
            try body(top.record)
            if let next = try read(&readers[top.file]) {
                heap[0] = (sequence(next), top.file, next)
            } else {
                heap[0] = heap[heap.count - 1]
                heap.removeLast()
            }
            if !heap.isEmpty { siftDown(0) }
        }
    }
}
