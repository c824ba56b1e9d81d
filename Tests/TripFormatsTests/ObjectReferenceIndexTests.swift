import Foundation
import Testing
import TripKit
@testable import TripFormats
import TripTestSupport

/// The XML and tables readers' index of names (`ObjectReferenceIndex`), kept in an `ObjectKeyTable`
/// under the run's budget: a unique value's key text is equal exactly where the values are, and the
/// index finds the same objects spilled as in memory.
@Suite struct ObjectReferenceIndexTests {
    /// Values whose equality as `ObjectValue`s has edges: signed zeros, NaN, canonical equivalence,
    /// one text in several kinds.
    static let values: [ObjectValue] = [
        .double(0.0), .double(-0.0), .double(.nan), .double(1.5), .double(.infinity), .date(1.5), .date(-0.0), .date(0),
        .string("café"), .string("cafe\u{301}"), .string("1"), .string(""), .int(1), .int(-1), .decimal("1"), .decimal("1.0"),
        .url("1"), .bool(true), .bool(false), .data([1]), .data([]), .uuid(UUIDBytes(Array(repeating: 7, count: 16))!), .null,
    ]

    @Test("key texts are equal exactly where the values are (0.0 and -0.0 one, NaN none, NFC and NFD one, kinds apart)")
    func keyTextEquality() {
        for a in Self.values {
            for b in Self.values {
                let ta = ObjectReferenceIndex.keyText(a), tb = ObjectReferenceIndex.keyText(b)
                // NaN and null have no key text: nothing is equal to them as a name.
                let named = !a.isNull && !b.isNull && a == a && b == b
                #expect((named && ta != nil && tb != nil && ta == tb) == (named && a == b), "\(a) \(b)")
                func hash(_ t: String?) -> Int? { t.map { var h = Hasher(); h.combine($0); return h.finalize() } }
                if named, a == b { #expect(hash(ta) == hash(tb), "\(a) \(b)") }
            }
            #expect((ObjectReferenceIndex.keyText(a) == nil) == (a.isNull || a != a), "\(a)")
        }
    }

    static let model = ObjectModel(entities: [
        EntityDescription("Item", attributes: [AttributeDescription("name", .string, isOptional: false)], uniquenessConstraints: [["name"]]),
        EntityDescription("Part", attributes: [AttributeDescription("n", .int64)]),
    ])

    /// 6,000 items named by value (every tenth repeating an earlier name, given under `repeatsUnique`
    /// for half the runs) and 6,000 parts by key (keys far apart, one repeated): every answer the same
    /// from an index in memory and from one that spilled past a 64 KiB budget.
    @Test("the same answers in memory and spilled", arguments: [false, true])
    func spilledAnswersTheSame(repeats: Bool) throws {
        let scratch = ScratchDirectory()
        func build(_ budget: SpillBudget?) throws -> (ObjectReferenceIndex, [ObjectReference?]) {
            let names = ObjectNaming(Self.model) { _, _ in true }
            var index = ObjectReferenceIndex(names, keys: ObjectKeyTable("the reader's index of keys", budget: budget))
            index.repeatsUnique = [repeats, false]
            var added: [ObjectReference?] = []
            for n in 1...6000 {
                let name = n % 10 == 0 ? "item \(n - 1) é" : "item \(n) é"
                added.append(try index.add(entity: 0, key: nil, value: .string(name), ordinal: n))
            }
            for n in 1...6000 { added.append(try index.add(entity: 1, key: Int64(n == 6000 ? 77 * 1_000_003 : n * 1_000_003), value: nil, ordinal: 6000 + n)) }
            return (index, added)
        }
        let (memory, inMemory) = try build(nil)
        let budget = SpillBudget(limit: 64 << 10, directory: scratch.path)
        let (spilled, onDisk) = try build(budget)
        #expect(spilled.keys.spilled && !memory.keys.spilled)
        #expect(inMemory == onDisk)
        #expect(inMemory.compactMap { $0 }.count == (repeats ? 6000 : 5400) + 5999)
        var questions = (1...6001).map { "item \($0) é" } + ["item 7 e\u{301}", "no such"]
        questions += (0...6001).map { String($0 * 1_000_003) } + ["x", "-1"]
        for q in questions {
            for destination in 0..<2 {
                let a = try memory.resolve(q, destination: destination), b = try spilled.resolve(q, destination: destination)
                #expect(a?.reference == b?.reference && a?.ordinal == b?.ordinal, "\(q)")
            }
        }
        #expect(try spilled.resolve("item 7 e\u{301}", destination: 0)?.reference == ObjectReference(entity: 0, key: 7))
        for ordinal in stride(from: 10, through: 6000, by: 10) {
            #expect(try memory.repeated(0, ordinal: ordinal) == spilled.repeated(0, ordinal: ordinal))
            #expect(try spilled.repeated(0, ordinal: ordinal) != nil || !repeats)
        }
    }

    /// Items (by `@key`) come before the Boxes (by label) their to-one names, and Nodes name their
    /// parent in their own table: the to-manys given back (Box.items, Node.children) have owners whose
    /// tables are not all read when the child's row is, so those rows are read again once every name
    /// is in. Written by Python's csv; read in memory and with the names and lists spilled past 64 KiB.
    static let lateModel = ObjectModel(entities: [
        EntityDescription("Item", attributes: [AttributeDescription("n", .int64)],
                          relationships: [RelationshipDescription("box", to: "Box", inverse: "items")]),
        EntityDescription("Box", attributes: [AttributeDescription("label", .string, isOptional: false)],
                          relationships: [RelationshipDescription("items", to: "Item", inverse: "box", toMany: true)],
                          uniquenessConstraints: [["label"]]),
        EntityDescription("Node", attributes: [],
                          relationships: [RelationshipDescription("parent", to: "Node", inverse: "children"),
                                          RelationshipDescription("children", to: "Node", inverse: "parent", toMany: true)]),
    ])

    @Test("to-manys given back by owners in later tables or in their own: the same in memory and spilled", .needsPython3)
    func lateOwners() throws {
        let dir = ScratchDirectory()
        _ = try JSONPython.run(script: """
            import csv, os, sys
            d = sys.argv[1]
            def write(name, rows):
                with open(os.path.join(d, name + '.csv'), 'w', newline='') as f: csv.writer(f).writerows(rows)
            # Item k in box (k * 7) % 300, none for every eleventh; box 'b 299' and node 5000's parent 9999 are not there.
            # Rows out of key order, so that a list kept in the order its owners were met is not in key order.
            shuffled = lambda n: sorted(range(1, n + 1), key=lambda k: (k * 37) % (n + 1))
            write('Item', [['@key', 'n', 'box']] + [[k, k, '' if k % 11 == 0 else 'b %d' % ((k * 7) % 300)] for k in shuffled(4000)])
            write('Box', [['label']] + [['b %d' % b] for b in range(299)])
            write('Node', [['@key', 'parent']] + [[k, '' if k == 1 else (9999 if k == 5000 else (k * 13) % (k - 1) + 1)] for k in shuffled(5000)])
            """, arguments: [dir.path])
        let model = Self.lateModel
        func read(_ keys: ObjectKeyTable?) throws -> (objects: [ObjectRecord], rejected: [SetAsideRecord]) {
            try ObjectGraph.readAll(CSVObjectTablesReader(directory: dir.path, format: .csv, model: model, options: ReadOptions(), keys: keys))
        }
        let memory = try read(nil)
        let table = ObjectKeyTable("the reader's index of keys", budget: SpillBudget(limit: 64 << 10, directory: dir.path))
        let spilled = try read(table)
        #expect(table.spilled)
        #expect(ObjectGraph.plain(memory.objects) == ObjectGraph.plain(spilled.objects))
        #expect(memory.rejected.map(\.reason) == spilled.rejected.map(\.reason))
        // What the files say, worked out here: each box's items and each node's children, in key order
        // (the reader sorts each list once: it fails, unsorted, without `sortLists`).
        var items: [Int: [Int64]] = [:], children: [Int: [Int64]] = [:]
        for k in 1...4000 where k % 11 != 0 && (k * 7) % 300 != 299 { items[(k * 7) % 300, default: []].append(Int64(k)) }
        for k in 2...4999 { children[(k * 13) % (k - 1) + 1, default: []].append(Int64(k)) }
        let boxes = memory.objects.filter { $0.entity == 1 }, nodes = memory.objects.filter { $0.entity == 2 }
        #expect(boxes.count == 299 && nodes.count == 5000 && memory.objects.count == 4000 + 299 + 5000)
        for box in boxes {
            guard case .string(let label) = box.attributes[0], let b = Int(label.dropFirst(2)) else { Issue.record("\(box)"); continue }
            #expect(box.relationships[0].map(\.key) == items[b] ?? [], "box \(b)")
            #expect(box.relationships[0].allSatisfy { $0.entity == 0 })
        }
        for node in nodes { #expect(node.relationships[1].map(\.key) == children[Int(node.key)] ?? [], "node \(node.key)") }
    }

    /// People with friends through a join file (a to-many without an inverse), its rows interleaved
    /// across owners, two naming no person.
    static let joinModel = ObjectModel(entities: [
        EntityDescription("Person", attributes: [AttributeDescription("n", .int64)],
                          relationships: [RelationshipDescription("friends", to: "Person", toMany: true)]),
    ])

    /// Join lists keep the file's order (not sorted) in memory and spilled; a read that reopens the
    /// reader counts the join file's removals again (was: lost, as `reopened` does not read the join
    /// files again and the run counts each read's removals anew).
    @Test("a join file: its order kept spilled, its removals counted again by a reopened read", .needsPython3)
    func joins() throws {
        let dir = ScratchDirectory()
        _ = try JSONPython.run(script: """
            import csv, os, sys
            d = sys.argv[1]
            with open(os.path.join(d, 'Person.csv'), 'w', newline='') as f:
                csv.writer(f).writerows([['@key', 'n']] + [[k, k] for k in range(1, 3001)])
            rows = [[k, (k * m) % 3000 + 1] for m in (7919, 31, 2) for k in range(1, 3001)]
            with open(os.path.join(d, 'Person.friends.csv'), 'w', newline='') as f:
                csv.writer(f).writerows([['@key', 'friends']] + rows + [[5, 99999], [99998, 1]])
            """, arguments: [dir.path])
        func read(_ keys: ObjectKeyTable?, _ removals: ObjectReferenceRemovals) throws -> CSVObjectTablesReader {
            try CSVObjectTablesReader(directory: dir.path, format: .csv, model: Self.joinModel, options: ReadOptions(), keys: keys, removals: removals)
        }
        let memoryRemovals = ObjectReferenceRemovals(), spilledRemovals = ObjectReferenceRemovals()
        let table = ObjectKeyTable("the reader's index of keys", budget: SpillBudget(limit: 64 << 10, directory: dir.path))
        let inMemory = try read(nil, memoryRemovals), spilled = try read(table, spilledRemovals)
        let memory = try ObjectGraph.readAll(inMemory), onDisk = try ObjectGraph.readAll(spilled)
        #expect(table.spilled)
        #expect(memory.objects.count == 3000 && ObjectGraph.plain(memory.objects) == ObjectGraph.plain(onDisk.objects))
        for person in memory.objects {
            let k = Int(person.key)
            #expect(person.relationships[0].map(\.key) == [7919, 31, 2].map { Int64((k * $0) % 3000 + 1) }, "person \(k)")
        }
        #expect(memoryRemovals.count == 2 && spilledRemovals.count == 2)
        let messages = memoryRemovals.firstMessages
        #expect(messages.count == 2 && messages[0].contains("'99999' names no Person") && messages[1].contains("its owner '99998' names no Person"),
                "\(messages)")
        // As the run reads again: its removals forgotten, the reader reopened.
        for (reader, removals) in [(inMemory, memoryRemovals), (spilled, spilledRemovals)] {
            removals.reset()
            let again = try ObjectGraph.readAll(reader.reopened())
            #expect(ObjectGraph.plain(again.objects) == ObjectGraph.plain(memory.objects))
            #expect(removals.count == 2 && removals.firstMessages == messages, "\(removals.firstMessages)")
        }
    }
}
