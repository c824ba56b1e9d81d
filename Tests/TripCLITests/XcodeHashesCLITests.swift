import Foundation
import Testing
import TripKit
import TripTestSupport

/// A Core Data store told to be at a version of an `.xcdatamodeld` by its `NSStoreModelVersionHashes`
/// (computed by Python from the version's XML, as Core Data computes them), where the versions
/// declare the same names and the names cannot tell them.
@Suite("detect and convert by a store's entity version hashes")
struct XcodeHashesCLITests {
    /// `Shop.xcdatamodel`: `Item.name` optional; `Shop 2.xcdatamodel` (current): `Item.name` required, `Tag`
    /// given a version hash modifier. Neither declares a version identifier.
    static func contents(second: Bool) -> String {
        """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" userDefinedModelVersionIdentifier="">
            <entity name="Item" representedClassName="Item" syncable="YES">
                <attribute name="count" optional="YES" attributeType="Integer 64" defaultValueString="0" usesScalarValueType="YES"/>
                <attribute name="name" \(second ? "" : "optional=\"YES\" ")attributeType="String"/>
                <relationship name="tags" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Tag" inverseName="items"/>
            </entity>
            <entity name="Tag" representedClassName="Tag" syncable="YES"\(second ? " versionHashModifier=\"lowercased\"" : "")>
                <attribute name="label" optional="YES" attributeType="String"/>
                <relationship name="items" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Item" inverseName="tags"/>
            </entity>
        </model>
        """
    }

    /// Writes `Shop.xcdatamodeld` (current: `Shop 2`) in `dir`.
    static func bundle(in dir: String) throws -> String {
        let bundle = dir + "/Shop.xcdatamodeld"
        for (folder, second) in [("Shop.xcdatamodel", false), ("Shop 2.xcdatamodel", true)] {
            try FileManager.default.createDirectory(atPath: bundle + "/" + folder, withIntermediateDirectories: true)
            try contents(second: second).write(toFile: bundle + "/" + folder + "/contents", atomically: true, encoding: .utf8)
        }
        try XcodeModelVersions.currentVersion("Shop 2.xcdatamodel").write(toFile: bundle + "/.xccurrentversion", atomically: true, encoding: .utf8)
        return bundle
    }

    /// A store of the shop's names, no version identifier, its hashes those of `version` (a folder), or
    /// the writer's zeros when nil.
    static func store(in dir: String, bundle: String, hashesOf version: String?) throws -> String {
        let path = dir + "/Shop.sqlite"
        let model = ObjectModel(entities: [
            EntityDescription("Item", attributes: [AttributeDescription("count", .int64), AttributeDescription("name", .string)],
                              relationships: [RelationshipDescription("tags", to: "Tag", inverse: "items", toMany: true)]),
            EntityDescription("Tag", attributes: [AttributeDescription("label", .string)],
                              relationships: [RelationshipDescription("items", to: "Item", inverse: "tags", toMany: true)]),
        ], versionIdentifiers: [""])
        let written = try ModelStoreWriter.write(model, to: path, rows: 2, damage: "nocache")
        #expect(written.status == 0, "\(written.stderr)")
        if let version {
            try CoreDataVersionHashes.write(try CoreDataVersionHashes.of(contents: bundle + "/" + version + "/contents"), into: path)
        }
        return path
    }

    @Test("detect: the hashes of 'Shop 2' tell it, where the names read the earliest; the JSON says the basis", .needsPython3)
    func detectsByHashes() throws {
        let dir = try CLI.temporaryDirectory().path
        let bundle = try Self.bundle(in: dir)
        let store = try Self.store(in: dir, bundle: bundle, hashesOf: "Shop 2.xcdatamodel")
        let r = try CLI.tripconv("detect", "--model", bundle, store)
        #expect(r.status == 0, "\(r.stderr)")
        let out = String(decoding: r.stdout, as: UTF8.self)
        #expect(out.contains("; version Shop 2 of the plan (Z_METADATA NSStoreModelVersionHashes match version Shop 2)\n"), "\(out)")
        let json = try CLI.tripconv("detect", "--model", bundle, store, "--json")
        #expect(json.status == 0, "\(json.stderr)")
        try json.stdout.write(to: URL(fileURLWithPath: dir + "/detect.json"))
        let checked = try CLI.python("""
            import json, sys
            v = json.load(open(sys.argv[1]))[0]['planVersion']
            print(v['version'], '|', v['basis'], '|', v['evidence'])
            """, [dir + "/detect.json"])
        #expect(String(decoding: checked.stdout, as: UTF8.self) == "Shop 2 | version hashes | ['Z_METADATA NSStoreModelVersionHashes match version Shop 2']\n", "\(checked.stderr)")
    }

    @Test("convert -v says the store was read at 'Shop 2' by its hashes", .needsPython3)
    func convertSays() throws {
        let dir = try CLI.temporaryDirectory().path
        let bundle = try Self.bundle(in: dir)
        let store = try Self.store(in: dir, bundle: bundle, hashesOf: "Shop 2.xcdatamodel")
        let r = try CLI.tripconv("convert", store, "--model", bundle, "-o", dir + "/out.json", "-v", "--rejects", dir + "/rejects.jsonl")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("read at Shop 2 (Z_METADATA NSStoreModelVersionHashes match version Shop 2), written at Shop 2"), "\(r.stderr)")
    }

    @Test("hashes matching no version: said, with what differs, and the names decide", .needsPython3)
    func noVersionMatches() throws {
        let dir = try CLI.temporaryDirectory().path
        let bundle = try Self.bundle(in: dir)
        let store = try Self.store(in: dir, bundle: bundle, hashesOf: nil)
        let r = try CLI.tripconv("detect", "--model", bundle, store)
        #expect(r.status == 0, "\(r.stderr)")
        let out = String(decoding: r.stdout, as: UTF8.self)
        #expect(out.contains("; version Shop of the plan (exact names: Z_METADATA NSStoreModelVersionHashes match no version of the plan "
                             + "(Shop: Item and Tag differ; Shop 2: Item and Tag differ); Shop and Shop 2 cannot be told apart"), "\(out)")
    }

    @Test("the 2014 store apps wrote, with its model as the later of two versions: its hashes tell it", .needsRealStores, .needsPython3)
    func realStore() throws {
        let dir = try TestPaths.copyRealStore("coredata-feedback")
        let real = dir + "/Model.xcdatamodeld/Model.xcdatamodel/contents"
        let bundle = dir + "/Feedback.xcdatamodeld"
        try FileManager.default.createDirectory(atPath: bundle + "/Model.xcdatamodel", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: bundle + "/Model 2.xcdatamodel", withIntermediateDirectories: true)
        let text = try String(contentsOfFile: real, encoding: .utf8)
        try text.write(toFile: bundle + "/Model 2.xcdatamodel/contents", atomically: true, encoding: .utf8)
        // The earlier version: FeedbackCategory.name required, the same names.
        let earlier = text.replacingOccurrences(of: "<attribute name=\"name\" optional=\"YES\" attributeType=\"String\" syncable=\"YES\"/>\n        <relationship name=\"subcategory\"",
                                                with: "<attribute name=\"name\" attributeType=\"String\" syncable=\"YES\"/>\n        <relationship name=\"subcategory\"")
        #expect(earlier != text)
        try earlier.write(toFile: bundle + "/Model.xcdatamodel/contents", atomically: true, encoding: .utf8)
        try XcodeModelVersions.currentVersion("Model 2.xcdatamodel").write(toFile: bundle + "/.xccurrentversion", atomically: true, encoding: .utf8)
        let r = try CLI.tripconv("detect", "--model", bundle, dir + "/Model.sqlite")
        #expect(r.status == 0, "\(r.stderr)")
        let out = String(decoding: r.stdout, as: UTF8.self)
        #expect(out.contains("; version Model 2 of the plan (Z_METADATA NSStoreModelVersionHashes match version Model 2)\n"), "\(out)")
    }
}
