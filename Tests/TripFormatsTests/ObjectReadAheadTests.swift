import Synchronization
import Testing
import TripKit
@testable import TripFormats

@Suite("Objects read ahead on a thread of their own")
struct ObjectReadAheadTests {
    /// Set once a reader is gone (from the thread that let it go).
    final class Flag: Sendable {
        private let value = Mutex(false)
        func set() { value.withLock { $0 = true } }
        var isSet: Bool { value.withLock { $0 } }
    }

    /// `count` objects (every fifth set aside), then `failure` if given; notes its own end in `gone`.
    final class Numbers: ObjectRecordReader {
        let model = ObjectModel(entities: [EntityDescription("Item", attributes: [AttributeDescription("n", .int64)])])
        let count: Int
        let failure: TripError?
        let gone: Flag
        var at = 0

        init(_ count: Int, failure: TripError? = nil, gone: Flag) { self.count = count; self.failure = failure; self.gone = gone }
        deinit { gone.set() }

        func next() throws -> ObjectReadItem? {
            guard at < count else {
                if let failure { throw failure }
                return nil
            }
            at += 1
            let origin = RecordOrigin(source: "numbers", record: at)
            if at % 5 == 0 { return .rejected(SetAsideRecord(origin: origin, reason: "fifth")) }
            return .object(ObjectRecord(entity: 0, key: Int64(at), attributes: [.int(Int64(at))], relationships: [], origin: origin))
        }
    }

    static func number(_ item: ObjectReadItem) -> Int {
        switch item {
        case .object(let o): return Int(o.key)
        case .rejected(let r): return -r.origin.record
        }
    }

    @Test("every item in the reader's order, across batches, then nil", arguments: [0, 1, 255, 256, 257, 2000])
    func inOrder(count: Int) throws {
        let gone = Flag()
        var reader = ObjectReadAhead.reading(Numbers(count, gone: gone), batchSize: 256, window: 2)
        #expect(reader is ObjectReadAhead)
        var seen: [Int] = []
        while let item = try reader.next() { seen.append(Self.number(item)) }
        #expect(seen == (0..<count).map { $0 % 5 == 4 ? -($0 + 1) : $0 + 1 })
        #expect(try reader.next() == nil)
        #expect(gone.isSet)
    }

    @Test("the reader's error after every item before it")
    func errorInOrder() throws {
        let gone = Flag()
        var reader = ObjectReadAhead.reading(Numbers(700, failure: TripError.data("a dangling key"), gone: gone), batchSize: 256)
        var seen = 0
        let error = #expect(throws: TripError.self) { while try reader.next() != nil { seen += 1 } }
        #expect(error?.message == "a dangling key")
        #expect(seen == 700)
    }

    @Test("a taker that stops early lets the reader go before it returns (a store's snapshot ends, its copy goes)")
    func earlyStop() throws {
        let gone = Flag()
        do {
            var reader = ObjectReadAhead.reading(Numbers(100_000, gone: gone), batchSize: 64, window: 2)
            for _ in 0..<3 { _ = try reader.next() }
        }
        #expect(gone.isSet)
    }
}
