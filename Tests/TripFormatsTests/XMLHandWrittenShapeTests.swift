import Testing
import TripKit
@testable import TripFormats

/// Shapes no writer of `XMLForeignWriterTests` makes, written by hand.
@Suite("XML shapes written by hand")
struct XMLHandWrittenShapeTests {
    static let dates = "startDate=\"2024-05-01T00:00:00Z\" endDate=\"2024-05-08T00:00:00Z\""

    @Test("attributes in another namespace are ignored, even with a field's local name; those in the element's own are fields")
    func namespacedAttributes() throws {
        let result = try xmlReadBothWays("""
        <t:trips xmlns:t="urn:example:trips" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:v="urn:vendor"
                 xsi:schemaLocation="urn:example:trips trips.xsd" t:schemaVersion="3.0.0" v:exported="2024">
          <t:trip v:name="not the name" xml:lang="en" t:destination="D" \(Self.dates)>
            <t:name xsi:type="string-less">N</t:name>
            <t:bucketList v:count="1"><t:item t:title="T" v:title="not the title" xml:space="preserve"/></t:bucketList>
            <t:livingAccommodation xsi:type="v:Hotel" t:placeName="Inn" v:placeName="not it"><t:address>A</t:address></t:livingAccommodation>
          </t:trip>
        </t:trips>
        """)
        #expect(result.rejections.map(\.reason) == [])
        #expect(result.detection.version == SchemaVersion(3, 0, 0))
        #expect(result.objects == [xmlTripV3("N", destination: "D", start: 1_714_521_600_000, end: 1_715_126_400_000,
                                             items: [xmlItem("T")], accommodation: xmlPlace("A", "Inn"))])
    }

    @Test("an element's namespace attribute in another namespace does not make a field attribute")
    func fieldElementWithForeignAttribute() throws {
        // A field element may carry attributes of other namespaces (xsi:type, xml:space) and
        // namespace declarations; an attribute of no namespace on it is still refused.
        let good = try xmlReadBothWays("""
        <trips><trip xmlns:v="urn:v"><name xmlns:w="urn:w" xml:space="preserve" v:x="1">N</name><destination>D</destination>\
        <startDate>2024-05-01</startDate><endDate>2024-05-08</endDate></trip></trips>
        """)
        #expect(good.rejections.map(\.reason) == [])
        #expect(good.objects.map { $0.attributes[0] } == [.string("N")])
        let bad = try xmlReadBothWays("""
        <trips><trip><name lang="en">N</name><destination>D</destination><startDate>2024-05-01</startDate><endDate>2024-05-08</endDate></trip></trips>
        """)
        #expect(bad.rejections.map(\.reason) == ["field 'name': expected text, found the attribute 'lang'"])
    }

    @Test("a default namespace on the root, and one declared again lower down with a prefix, read as none")
    func defaultAndRedeclaredNamespaces() throws {
        let result = try xmlReadBothWays("""
        <trips xmlns="urn:example:trips" schemaVersion="3.0.0">
          <trip name="A" destination="D" \(Self.dates)/>
          <x:trip xmlns:x="urn:example:trips" x:name="B" destination="D" \(Self.dates)><x:bucketList><item title="T"/></x:bucketList></x:trip>
          <trip xmlns="urn:other" name="C" destination="D" \(Self.dates)/>
        </trips>
        """)
        #expect(result.rejections.map(\.reason) == [])
        #expect(result.objects.map { $0.attributes[0] } == [.string("A"), .string("B"), .string("C")])
        #expect(result.objects[1].relationships[0] == .toMany([xmlItem("T")]))
    }

    @Test("comments and processing instructions anywhere: before and after the root, between trips, in trips, lists, items and fields")
    func commentsEverywhere() throws {
        let result = try xmlReadBothWays("""
        <?xml version="1.0" encoding="UTF-8"?>
        <!-- exported --><?app version="2"?>
        <!DOCTYPE trips SYSTEM "trips.dtd">
        <!-- after the DOCTYPE -->
        <trips schemaVersion="3.0.0"><!-- first -->
          <?pi between?>
          <trip><!-- in a trip --><name>A<!-- in a field -->B<?pi in a field?>C</name><?pi?>
            <destination><!-- only a comment --></destination>
            <startDate><?pi?>2024-05-01T00:00:00Z<!-- after --></startDate><endDate>2024-05-08T00:00:00Z</endDate>
            <bucketList><!-- c --><item><!-- c --><title>  <!-- spaces around -->  </title><?pi?></item><?pi?></bucketList>
            <livingAccommodation><!-- c --><address><![CDATA[a]]><!-- c --><![CDATA[b]]> c </address></livingAccommodation><!-- c -->
          </trip><!-- between -->
          <trip name="B" destination="D" \(Self.dates)><!-- in an empty trip --></trip>
        </trips>
        <!-- after the root --><?pi after?>

        """)
        #expect(result.rejections.map(\.reason) == [])
        #expect(result.objects == [
            xmlTripV3("ABC", destination: "", start: 1_714_521_600_000, end: 1_715_126_400_000,
                      items: [xmlItem("    ")], accommodation: xmlPlace("ab c ", "")),
            xmlTripV3("B", destination: "D", start: 1_714_521_600_000, end: 1_715_126_400_000),
        ])
    }

    @Test("text, CDATA and references mixed in one field, on one line and across lines")
    func mixedText() throws {
        let result = try xmlReadBothWays("""
        <trips><trip><name>a<![CDATA[<b>]]>&amp;<![CDATA[]]>&#x1F600;<![CDATA[ & ]]>z</name><destination>
        line &amp;
        <![CDATA[line]]>
        </destination><startDate>2024-05-01</startDate><endDate>2024-05-02</endDate></trip></trips>
        """)
        #expect(result.objects.map { $0.attributes[0] } == [.string("a<b>&😀 & z")])
        #expect(result.objects.map { $0.attributes[1] } == [.string("\nline &\nline\n")])
    }
}
