import Foundation
import Testing
@testable import TripFormats
import TripKit
import TripTestSupport

/// The CSV row reader against data nobody on this project wrote (../shared/conformance; without it the
/// suite skips, saying so).
@Suite("CSV conformance", .needsConformance)
struct CSVConformanceTests {
    static func rows(path: String) throws -> [[String]] {
        let reader = CSVRowReader(try ByteInput(.file(path)), dialect: .csv)
        var rows: [[String]] = []
        while try reader.nextRow() { rows.append(reader.strings) }
        return rows
    }

    static var spectrumNames: [String] {
        guard let root = TestPaths.conformance else { return [] }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: root + "/csv-spectrum/csvs")) ?? []
        return names.filter { $0.hasSuffix(".csv") }.map { String($0.dropLast(4)) }.sorted()
    }

    @Test("csv-spectrum has its 11 cases")
    func spectrumPresent() {
        #expect(Self.spectrumNames.count == 11)
    }

    @Test("each csv-spectrum file reads as its expected JSON", arguments: spectrumNames)
    func spectrum(name: String) throws {
        let root = try #require(TestPaths.conformance)
        let rows = try Self.rows(path: "\(root)/csv-spectrum/csvs/\(name).csv")
        let json = try Data(contentsOf: URL(fileURLWithPath: "\(root)/csv-spectrum/json/\(name).json"))
        let expected = try JSONSerialization.jsonObject(with: json) as? [[String: String]]
        let header = try #require(rows.first)
        let records = rows.dropFirst().map { row in Dictionary(uniqueKeysWithValues: zip(header, row)) }
        #expect(rows.dropFirst().allSatisfy { $0.count == header.count })
        #expect(records == expected)
    }

    @Test("each csv-spectrum file is a clean data error naming the missing trip columns", arguments: spectrumNames)
    func spectrumAsTrips(name: String) throws {
        let root = try #require(TestPaths.conformance)
        let path = "\(root)/csv-spectrum/csvs/\(name).csv"
        let error = CSVIO.error { _ = try CSVIO.read(path: path) }
        #expect(error?.kind == .data)
        #expect(error?.message.hasPrefix("\(path):1:1: missing trip columns 'name', 'destination', 'startDate', 'endDate'") == true)
    }

    struct Expectation: Sendable, CustomTestStringConvertible {
        var suite: String
        var file: String
        var expect: String
        var rows: [[String]]?
        var header: [String]?
        var rowCount: Int?
        var firstDataRow: [String]?
        var ifAcceptedRows: [[String]]?
        var testDescription: String { "\(suite)/\(file) (\(expect))" }
    }

    static var expectations: [Expectation] {
        guard let root = TestPaths.conformance else { return [] }
        var all: [Expectation] = []
        for suite in ["commons-csv", "csvlint"] {
            guard let data = FileManager.default.contents(atPath: "\(root)/\(suite)/EXPECTATIONS.json"),
                  let list = try? JSONSerialization.jsonObject(with: data) as? [[String: Any]] else { continue }
            for e in list {
                all.append(Expectation(suite: suite, file: e["file"] as! String, expect: e["expect"] as! String,
                                       rows: e["rows"] as? [[String]], header: e["header"] as? [String],
                                       rowCount: e["row_count"] as? Int, firstDataRow: e["first_data_row"] as? [String],
                                       ifAcceptedRows: e["if_accepted_rows"] as? [[String]]))
            }
        }
        return all
    }

    @Test("commons-csv and csvlint have their 25 expectations")
    func expectationsPresent() {
        #expect(Self.expectations.count == 25)
    }

    @Test("commons-csv and csvlint files are read as EXPECTATIONS.json says", arguments: expectations)
    func expectation(_ e: Expectation) throws {
        let root = try #require(TestPaths.conformance)
        let path = "\(root)/\(e.suite)/\(e.file)"
        let result = Result { try Self.rows(path: path) }
        switch e.expect {
        case "parse":
            let rows = try result.get()
            if let expected = e.rows { #expect(rows == expected) }
            if let header = e.header { #expect(rows.first == header) }
            if let count = e.rowCount { #expect(rows.count == count) }
            if let first = e.firstDataRow { #expect(rows.dropFirst().first == first) }
        case "reject":
            guard case .failure(let error) = result else { Issue.record("\(e.file) was accepted"); return }
            #expect((error as? TripError)?.kind == .data)
        default:
            // Either: no crash; when accepted, the rows given.
            if case .success(let rows) = result, let expected = e.ifAcceptedRows { #expect(rows == expected) }
            if case .failure(let error) = result { #expect((error as? TripError)?.kind == .data) }
        }
    }

    @Test("every commons-csv and csvlint file read as trips ends in a clean data error", arguments: expectations)
    func expectationAsTrips(_ e: Expectation) throws {
        let root = try #require(TestPaths.conformance)
        let error = CSVIO.error { _ = try CSVIO.read(path: "\(root)/\(e.suite)/\(e.file)") }
        #expect(error?.kind == .data)
    }

    @Test("Latin-1 bytes are an encoding error naming line and column, or read with latin1")
    func latin1Fixture() throws {
        let root = try #require(TestPaths.conformance)
        let path = "\(root)/csvlint/fixtures/invalid-byte-sequence.csv"
        let error = CSVIO.error { _ = try Self.rows(path: path) }
        #expect(error?.message == "\(path):1:34: invalid UTF-8 bytes 0xF3")
        let reader = CSVRowReader(try ByteInput(.file(path)), dialect: .csv, encoding: .latin1)
        #expect(try reader.nextRow())
        #expect(reader.string(2) == "Histórico")
    }
}
