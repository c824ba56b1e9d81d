import Foundation
import Testing
import TripTestSupport

/// `--migrate` migrates the store `-o` names and accounts for it; `--output-dir` writes a file per
/// input, where a migration would go unaccounted (no summary line, no backup named): `--migrate`,
/// `--backup` and `--no-backup` are refused with it, before anything is read or written (issue 25).
@Suite("--output-dir with --migrate or a backup option")
struct OutputDirMigrateCLITests {
    @Test("refused, exit 64, the older store already in the folder left as it was and no backup made",
          arguments: [["--migrate", "--backup", "BACKUP"], ["--migrate"], ["--migrate", "--no-backup"], ["--backup", "BACKUP"], ["--no-backup"]])
    func refused(options: [String]) throws {
        let dir = try CLI.temporaryDirectory()
        let out = dir.appendingPathComponent("out").path, backup = dir.appendingPathComponent("kept.sqlite").path
        let store = out + "/trips-v1.sqlite"
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        let made = try CLI.tripconv("samples/trips-v1.json", "-q", "-o", store, "--target-version", "1.0.0")
        #expect(made.status == 0, "\(made.stderr)")
        let before = try #require(FileManager.default.contents(atPath: store))

        let arguments = ["samples/trips-v1.json", "--output-dir", out, "--to", "sqlite"] + options.map { $0 == "BACKUP" ? backup : $0 }
        let run = try CLI.run(CLI.binary, arguments)
        #expect(run.status == 64, "\(run.stderr)")
        #expect(run.stderr.hasPrefix("tripconv: "), "\(run.stderr)")
        #expect(run.stderr.contains(options.contains("--migrate") ? "--migrate migrates the store -o names" : "go with --migrate"), "\(run.stderr)")
        #expect(FileManager.default.contents(atPath: store) == before, "the store in the folder changed")
        #expect(try FileManager.default.contentsOfDirectory(atPath: out) == ["trips-v1.sqlite"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["out"], "a backup was made")
    }

    @Test("-o STORE --migrate --backup FILE still migrates the store, backed up to FILE")
    func outputStoreMigrates() throws {
        let dir = try CLI.temporaryDirectory()
        let store = dir.appendingPathComponent("trips.sqlite").path, backup = dir.appendingPathComponent("kept.sqlite").path
        #expect(try CLI.tripconv("samples/trips-v1.json", "-q", "-o", store, "--target-version", "1.0.0").status == 0)
        let run = try CLI.tripconv("samples/trips-v3.json", "-o", store, "--migrate", "--backup", backup)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains("migrated 1.0.0 -> 3.0.0 in place") && run.stderr.contains("backup \(backup)"), "\(run.stderr)")
        let detect = try CLI.tripconv("detect", backup)
        #expect(detect.out.contains("sqlite 1.0.0"), "\(detect.out)")
    }
}
