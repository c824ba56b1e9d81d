import Foundation

/// An Xcode `.xcdatamodeld` of three versions, each `contents` as Xcode writes it (the attributes of
/// each element in Xcode's order, `elementID` for a Renaming ID, `.xccurrentversion` a plist):
///
/// - `Garden.xcdatamodel` (no version identifier, Xcode 5's shape with `<elements>`): `Plant` (`name`,
///   `height` Integer 32, `planted`, to-one `bed`), `Bed` (`label`, to-many `plants`), `Seed` (`kind`);
/// - `Garden 2.xcdatamodel` (identifier `2.0`): `Plant.name` renamed `title` (`elementID="name"`), a
///   required `watered` Boolean with default NO added;
/// - `Garden 10.xcdatamodel` (no identifier; current): `title` renamed again, `heading` (`elementID=
///   "name"`), `height` now a String, `Bed` renamed `Plot` and `Plant.bed` renamed `plot`, `Seed`
///   removed, an optional `color` added.
///
/// Its folder names sort "Garden", "Garden 10", "Garden 2" as text, "Garden 2" before "Garden 10" as
/// numbers.
public enum XcodeModelVersions {
    public static let header = """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" lastSavedToolsVersion="22522" systemVersion="23E224" \
        minimumToolsVersion="Automatic" sourceLanguage="Swift" userDefinedModelVersionIdentifier="
        """

    public static let version1 = """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model userDefinedModelVersionIdentifier="" type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" \
        lastSavedToolsVersion="3396" systemVersion="13D65" minimumToolsVersion="Xcode 4.3" macOSVersion="Automatic" iOSVersion="Automatic">
            <entity name="Bed" representedClassName="Bed" syncable="YES">
                <attribute name="label" optional="YES" attributeType="String" syncable="YES"/>
                <relationship name="plants" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Plant" inverseName="bed" \
        inverseEntity="Plant" syncable="YES"/>
            </entity>
            <entity name="Plant" representedClassName="Plant" syncable="YES">
                <attribute name="height" optional="YES" attributeType="Integer 32" defaultValueString="0" syncable="YES"/>
                <attribute name="name" attributeType="String" syncable="YES"/>
                <attribute name="planted" optional="YES" attributeType="Date" syncable="YES"/>
                <relationship name="bed" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Bed" inverseName="plants" \
        inverseEntity="Bed" syncable="YES"/>
            </entity>
            <entity name="Seed" representedClassName="Seed" syncable="YES">
                <attribute name="kind" optional="YES" attributeType="String" syncable="YES"/>
            </entity>
            <elements>
                <element name="Bed" positionX="-54" positionY="-9" width="128" height="73"/>
                <element name="Plant" positionX="-486" positionY="-198" width="128" height="103"/>
                <element name="Seed" positionX="-270" positionY="-90" width="128" height="58"/>
            </elements>
        </model>
        """

    public static let version2 = header + """
        2.0">
            <entity name="Bed" representedClassName="Bed" syncable="YES" codeGenerationType="class">
                <attribute name="label" optional="YES" attributeType="String"/>
                <relationship name="plants" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Plant" inverseName="bed" \
        inverseEntity="Plant"/>
            </entity>
            <entity name="Plant" representedClassName="Plant" syncable="YES" codeGenerationType="class">
                <attribute name="height" optional="YES" attributeType="Integer 32" defaultValueString="0" usesScalarValueType="YES"/>
                <attribute name="planted" optional="YES" attributeType="Date" usesScalarValueType="NO"/>
                <attribute name="title" attributeType="String" elementID="name"/>
                <attribute name="watered" attributeType="Boolean" defaultValueString="NO" usesScalarValueType="YES"/>
                <relationship name="bed" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Bed" inverseName="plants" \
        inverseEntity="Bed"/>
            </entity>
            <entity name="Seed" representedClassName="Seed" syncable="YES" codeGenerationType="class">
                <attribute name="kind" optional="YES" attributeType="String"/>
            </entity>
        </model>
        """

    public static let version10 = header + """
        ">
            <entity name="Plant" representedClassName="Plant" syncable="YES" codeGenerationType="class">
                <attribute name="color" optional="YES" attributeType="String"/>
                <attribute name="heading" attributeType="String" elementID="name"/>
                <attribute name="height" optional="YES" attributeType="String"/>
                <attribute name="planted" optional="YES" attributeType="Date" usesScalarValueType="NO"/>
                <attribute name="watered" attributeType="Boolean" defaultValueString="NO" usesScalarValueType="YES"/>
                <relationship name="plot" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Plot" inverseName="plants" \
        inverseEntity="Plot" elementID="bed"/>
            </entity>
            <entity name="Plot" representedClassName="Plot" elementID="Bed" syncable="YES" codeGenerationType="class">
                <attribute name="label" optional="YES" attributeType="String"/>
                <relationship name="plants" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Plant" inverseName="plot" \
        inverseEntity="Plant"/>
            </entity>
        </model>
        """

    /// `.xccurrentversion` naming `version` (`Garden 10.xcdatamodel`) as Xcode writes it.
    public static func currentVersion(_ version: String) -> String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">
        <dict>
        \t<key>_XCCurrentVersionName</key>
        \t<string>\(version)</string>
        </dict>
        </plist>

        """
    }

    /// Writes `Garden.xcdatamodeld` in `directory` (current: `current`) and returns its path.
    public static func write(in directory: String, current: String = "Garden 10.xcdatamodel") throws -> String {
        let bundle = directory + "/Garden.xcdatamodeld"
        for (folder, text) in [("Garden.xcdatamodel", version1), ("Garden 2.xcdatamodel", version2), ("Garden 10.xcdatamodel", version10)] {
            try FileManager.default.createDirectory(atPath: bundle + "/" + folder, withIntermediateDirectories: true)
            try (text + "\n").write(toFile: bundle + "/" + folder + "/contents", atomically: true, encoding: .utf8)
        }
        try currentVersion(current).write(toFile: bundle + "/.xccurrentversion", atomically: true, encoding: .utf8)
        return bundle
    }
}
