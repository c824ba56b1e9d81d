import Foundation
import Testing
import TripKit
@testable import TripFormats

/// Xcode models (`.xcdatamodeld`, `.xcdatamodel`, `contents`) read through the XML event parser.
@Suite("Xcode models")
struct XcodeModelTests {
    static let version2 = """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" userDefinedModelVersionIdentifier="2.0">
            <entity name="Animal" representedClassName="Animal" isAbstract="YES" syncable="YES">
                <attribute name="name" attributeType="String" defaultValueString="Rex"/>
                <attribute name="born" optional="YES" attributeType="Date" defaultDateTimeInterval="12.5" usesScalarValueType="NO"/>
                <relationship name="keeper" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Keeper"
                    inverseName="animals" inverseEntity="Keeper"/>
                <uniquenessConstraints>
                    <uniquenessConstraint>
                        <constraint value="name"/>
                    </uniquenessConstraint>
                    <uniquenessConstraint>
                        <constraint value="name"/>
                        <constraint value="born"/>
                    </uniquenessConstraint>
                </uniquenessConstraints>
            </entity>
            <entity name="Dog" parentEntity="Animal" elementID="Hound">
                <attribute name="good" attributeType="Boolean" defaultValueString="YES" usesScalarValueType="YES"/>
                <attribute name="weight" optional="YES" attributeType="Double" defaultValueString="2.5"/>
                <attribute name="tricks" optional="YES" attributeType="Transformable" valueTransformerName="NSSecureUnarchiveFromData"
                    customClassName="[String]"/>
                <attribute name="scratch" optional="YES" transient="YES" attributeType="Integer 16" defaultValueString="0"/>
            </entity>
            <entity name="Keeper">
                <attribute name="id" attributeType="UUID"/>
                <relationship name="animals" toMany="YES" deletionRule="Deny" destinationEntity="Animal" inverseName="keeper" inverseEntity="Animal"/>
                <relationship name="tasks" optional="YES" toMany="YES" ordered="YES" deletionRule="Cascade" destinationEntity="Task"/>
                <relationship name="boss" optional="YES" maxCount="1" deletionRule="No Action" destinationEntity="Keeper"/>
                <uniquenessConstraints>
                    <uniquenessConstraint>
                        <constraint value="id"/>
                    </uniquenessConstraint>
                </uniquenessConstraints>
            </entity>
            <entity name="Task">
                <attribute name="title" optional="YES" attributeType="String"/>
            </entity>
            <elements>
                <element name="Animal" positionX="0" positionY="0" width="128" height="60"/>
            </elements>
        </model>
        """

    static let expected = ObjectModel(entities: [
        EntityDescription("Animal", isAbstract: true, attributes: [
            AttributeDescription("name", .string, isOptional: false, defaultValue: .string("Rex")),
            AttributeDescription("born", .date, isOptional: true, defaultValue: .date(12.5)),
        ], relationships: [RelationshipDescription("keeper", to: "Keeper", inverse: "animals", isOptional: true)],
        uniquenessConstraints: [["name"], ["name", "born"]]),
        EntityDescription("Dog", superentity: "Animal", attributes: [
            AttributeDescription("good", .bool, isOptional: false, defaultValue: .bool(true)),
            AttributeDescription("weight", .double, isOptional: true, defaultValue: .double(2.5)),
            AttributeDescription("tricks", .transformable, isOptional: true, valueClassName: "[String]",
                                 valueTransformerName: "NSSecureUnarchiveFromData"),
            AttributeDescription("scratch", .int16, isOptional: true, isTransient: true, defaultValue: .int(0)),
        ], renamingIdentifier: "Hound"),
        EntityDescription("Keeper", attributes: [AttributeDescription("id", .uuid, isOptional: false)], relationships: [
            RelationshipDescription("animals", to: "Animal", inverse: "keeper", toMany: true, isOptional: false, deleteRule: .deny),
            RelationshipDescription("tasks", to: "Task", toMany: true, ordered: true, isOptional: true, deleteRule: .cascade),
            RelationshipDescription("boss", to: "Keeper", isOptional: true, deleteRule: .noAction),
        ], uniquenessConstraints: [["id"]]),
        EntityDescription("Task", attributes: [AttributeDescription("title", .string, isOptional: true)]),
    ], versionIdentifiers: ["2.0"])

    /// An `.xcdatamodeld` of two versions, the second current.
    static func bundle() throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tripconv-xcode-\(UUID().uuidString)/Zoo.xcdatamodeld").path
        for (version, text) in [("Zoo.xcdatamodel", "<model><entity name=\"Old\"/></model>"), ("Zoo 2.xcdatamodel", version2)] {
            try FileManager.default.createDirectory(atPath: dir + "/" + version, withIntermediateDirectories: true)
            try text.write(toFile: dir + "/" + version + "/contents", atomically: true, encoding: .utf8)
        }
        try """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">
            <dict>
                <key>_XCCurrentVersionName</key>
                <string>Zoo 2.xcdatamodel</string>
            </dict>
            </plist>
            """.write(toFile: dir + "/.xccurrentversion", atomically: true, encoding: .utf8)
        return dir
    }

    @Test("an .xcdatamodeld reads its current version: every attribute, relationship, delete rule, uniqueness, inheritance")
    func currentVersion() throws {
        let dir = try Self.bundle()
        let (model, file) = try XcodeModel.read(dir)
        #expect(file == dir + "/Zoo 2.xcdatamodel/contents")
        #expect(model == Self.expected)
        #expect(try XcodeModel.read(dir + "/Zoo 2.xcdatamodel/contents").model == Self.expected)
    }

    @Test("an .xcdatamodeld whose current version is missing, and a model naming an unknown type, are bad data naming the file")
    func refused() throws {
        let dir = try Self.bundle()
        try FileManager.default.removeItem(atPath: dir + "/Zoo 2.xcdatamodel")
        let missing = try #require(throws: TripError.self) { try XcodeModel.read(dir) }
        #expect(missing.kind == .data && missing.message.hasPrefix("\(dir)/.xccurrentversion: the current version 'Zoo 2.xcdatamodel'"))
        let bad = dir + "/Zoo.xcdatamodel/contents"
        try "<model><entity name=\"A\"><attribute name=\"x\" attributeType=\"Quaternion\"/></entity></model>".write(toFile: bad, atomically: true, encoding: .utf8)
        let unknown = try #require(throws: TripError.self) { try XcodeModel.read(bad) }
        #expect(unknown.message.hasSuffix("A.x: unknown attributeType 'Quaternion'"), "\(unknown.message)")
        try "<model><entity name=\"A\">".write(toFile: bad, atomically: true, encoding: .utf8)
        #expect(throws: TripError.self) { try XcodeModel.read(bad) }
    }
}
