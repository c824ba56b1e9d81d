import Foundation
import Testing
import TripKit
@testable import TripFormats
import TripTestSupport

/// Core Data's entity version hashes (`EntityVersionHash`, `XcodeModel.versionHashes`): SHA-256 against
/// python3's hashlib, the hashes against the stores apps wrote and against a Python computation.
@Suite("Entity version hashes")
struct EntityVersionHashTests {
    @Test("SHA-256 gives hashlib's digests, at the block and padding boundaries too", .needsPython3)
    func sha256() throws {
        let lengths = [0, 1, 3, 55, 56, 63, 64, 65, 119, 120, 127, 128, 1000]
        let r = try ExternalTool.python("""
            import hashlib
            for n in [\(lengths.map(String.init).joined(separator: ","))]:
                print(hashlib.sha256(bytes((i * 7 + 3) % 256 for i in range(n))).hexdigest())
            """)
        #expect(r.status == 0, "\(r.stderr)")
        let mine = lengths.map { n in SHA256.digest((0..<n).map { UInt8(($0 * 7 + 3) % 256) }).map { String(format: "%02x", $0) }.joined() }
        #expect(r.out == mine.joined(separator: "\n") + "\n")
        var pieces = SHA256()
        for chunk in stride(from: 0, to: 1000, by: 37) { pieces.update((chunk..<min(chunk + 37, 1000)).map { UInt8(($0 * 7 + 3) % 256) }) }
        #expect(pieces.finish().map { String(format: "%02x", $0) }.joined() == mine.last)
    }

    static func hex(_ hashes: [String: [UInt8]]) -> [String: String] {
        hashes.mapValues { $0.map { String(format: "%02x", $0) }.joined() }
    }

    @Test("the 2014 Core Data store's NSStoreModelVersionHashes are those of the Xcode model that made it", .needsRealStores, .needsPython3)
    func realCoreData() throws {
        let dir = try TestPaths.copyRealStore("coredata-feedback")
        let store = try StoreModel.read(storeAt: dir + "/Model.sqlite")
        #expect(store.versionHashes.count == 2 && store.versionHashes.values.allSatisfy { $0.count == 32 })
        let plan = try XcodeModel.plan(dir + "/Model.xcdatamodeld")
        #expect(plan.entityVersionHashes["Model"] == store.versionHashes)
        // The Python computation too, the same rules written apart.
        #expect(try CoreDataVersionHashes.of(contents: dir + "/Model.xcdatamodeld/Model.xcdatamodel/contents") == Self.hex(store.versionHashes))
    }

    @Test("the 2024 SwiftData store's hashes are those of its model cache's model: unique Item.name, required to-many", .needsRealStores)
    func realSwiftData() throws {
        let dir = try TestPaths.copyRealStore("swiftdata-resourcesmanager")
        let store = try StoreModel.read(storeAt: dir + "/default.store")
        #expect(store.versionHashes.keys.sorted() == ["Component", "CraftingRecipe", "Item"])
        #expect(EntityVersionHash.hashes(EntityVersionHash.entities(of: store.model)) == store.versionHashes)
        // A uniqueness constraint is part of Item's hash: without it the hash is another.
        var loose = store.model
        loose.entities[loose.entityIndex("Item")!].uniquenessConstraints = []
        #expect(EntityVersionHash.hashes(EntityVersionHash.entities(of: loose))["Item"] != store.versionHashes["Item"])
    }

    /// A model using what the hashes take: an abstract parent and its subentity, version hash modifiers,
    /// counts, an ordered to-many, a reflexive relationship, a uniqueness constraint, a transient
    /// attribute, external storage and a value kept in history.
    static let rich = """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" userDefinedModelVersionIdentifier="">
            <entity name="Thing" isAbstract="YES" versionHashModifier="v2">
                <attribute name="created" optional="YES" attributeType="Date" preserveAfterDeletion="YES"/>
                <attribute name="scratch" optional="YES" transient="YES" attributeType="String"/>
                <relationship name="friends" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Thing" inverseName="friends"/>
            </entity>
            <entity name="Box" parentEntity="Thing">
                <attribute name="label" attributeType="String" versionHashModifier="trimmed"/>
                <attribute name="photo" optional="YES" attributeType="Binary" allowsExternalBinaryDataStorage="YES"/>
                <attribute name="size" attributeType="Integer 64" defaultValueString="0"/>
                <relationship name="items" minCount="1" maxCount="5" toMany="YES" ordered="YES" deletionRule="Cascade" destinationEntity="Item" \
        inverseName="box"/>
                <uniquenessConstraints>
                    <uniquenessConstraint><constraint value="label"/></uniquenessConstraint>
                </uniquenessConstraints>
            </entity>
            <entity name="Item">
                <attribute name="amount" optional="YES" attributeType="Decimal"/>
                <relationship name="box" maxCount="1" deletionRule="Nullify" destinationEntity="Box" inverseName="items"/>
                <relationship name="origin" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Box"/>
            </entity>
        </model>
        """

    @Test("a model of every part the hashes take: tripconv's hashes are the Python computation's", .needsPython3)
    func richModel() throws {
        let scratch = ScratchDirectory()
        let dir = scratch.path
        let contents = dir + "/contents"
        try Self.rich.write(toFile: contents, atomically: true, encoding: .utf8)
        let elements = try XcodeModel.elements(contents)
        var places: [String: String] = [:]
        let model = try XcodeModel.model(elements: elements, path: contents, places: &places)
        let (hashes, why) = XcodeModel.versionHashes(model, elements: elements, path: contents)
        #expect(why == nil)
        let computed = try #require(hashes)
        #expect(computed.keys.sorted() == ["Box", "Item", "Thing"])
        #expect(Self.hex(computed) == (try CoreDataVersionHashes.of(contents: contents)))
        // Each part changes the hash: a modifier, a count, the order flag.
        for (old, new) in [("versionHashModifier=\"trimmed\"", ""), ("maxCount=\"5\"", "maxCount=\"6\""), ("ordered=\"YES\"", "")] {
            try Self.rich.replacingOccurrences(of: old, with: new).write(toFile: contents, atomically: true, encoding: .utf8)
            let e = try XcodeModel.elements(contents)
            let m = try XcodeModel.model(elements: e, path: contents, places: &places)
            #expect(XcodeModel.versionHashes(m, elements: e, path: contents).hashes?["Box"] != computed["Box"], "\(old)")
        }
    }

    @Test("a derived attribute: no hashes, the reason naming its line")
    func derived() throws {
        let scratch = ScratchDirectory()
        let dir = scratch.path
        let contents = dir + "/contents"
        let text = Self.rich.replacingOccurrences(of: "<attribute name=\"amount\" optional=\"YES\" attributeType=\"Decimal\"/>",
                                                  with: "<attribute name=\"amount\" optional=\"YES\" attributeType=\"Decimal\" derived=\"YES\" "
                                                      + "derivationExpression=\"box.size\"/>")
        try text.write(toFile: contents, atomically: true, encoding: .utf8)
        let elements = try XcodeModel.elements(contents)
        var places: [String: String] = [:]
        let model = try XcodeModel.model(elements: elements, path: contents, places: &places)
        let (hashes, why) = XcodeModel.versionHashes(model, elements: elements, path: contents)
        #expect(hashes == nil)
        #expect(why == "\(contents):18: Item.amount is a derived attribute, whose version hash tripconv does not compute")
    }
}
