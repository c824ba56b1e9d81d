import Foundation
import Testing
import TripTestSupport

/// Archives read as directories (issue 17), made by writers that are not ours: Python's tarfile (in
/// every compression it writes) and zipfile, the zstd tool over a tar. Each reads as its members
/// unpacked do, in the archive's order; places name the member; hostile archives are exit 65 and
/// write nothing.
@Suite("archives on the command line")
struct ArchiveCLITests {
    /// Python that writes an archive: argv[1] the path, argv[2] the kind (tar, tar.gz, tar.bz2,
    /// tar.xz, zip, zip-deflated), then MEMBER=SOURCE pairs (SOURCE a file, or `:text` for text).
    static let writer = """
        import sys, io, tarfile, zipfile
        path, kind, pairs = sys.argv[1], sys.argv[2], sys.argv[3:]
        def data(source):
            return source[1:].encode() if source.startswith(':') else open(source, 'rb').read()
        members = [(p.split('=', 1)[0], data(p.split('=', 1)[1])) for p in pairs]
        if kind.startswith('zip'):
            how = zipfile.ZIP_DEFLATED if kind == 'zip-deflated' else zipfile.ZIP_STORED
            with zipfile.ZipFile(path, 'w', compression=how) as z:
                for name, d in members: z.writestr(name, d)
        else:
            mode = {'tar': 'w', 'tar.gz': 'w:gz', 'tar.bz2': 'w:bz2', 'tar.xz': 'w:xz'}[kind]
            with tarfile.open(path, mode) as t:
                for name, d in members:
                    info = tarfile.TarInfo(name); info.size = len(d)
                    t.addfile(info, io.BytesIO(d))
        """

    /// The members of the mixed archive, in the archive's order (not path order): formats and
    /// versions mixed, one compressed, one in a directory.
    static let mixed = ["2020/b.csv=samples/trips-v2.csv", "2019/a.json=samples/trips-v1.json", "c.xml=samples/trips-v3.xml",
                        "2021/d.yaml=samples/trips-v1.yaml", "e.jsonl=samples/trips-v2.jsonl", "README.txt=:not trips"]

    static func archive(_ path: String, _ kind: String, _ members: [String]) throws {
        let r = try CLI.python(writer, [path, kind] + members)
        #expect(r.status == 0, "\(r.stderr)")
    }

    /// tripconv on the mixed members as plain files, in the archive's order.
    static func unpacked(_ extra: [String]) throws -> CLI.Result {
        try CLI.run(CLI.binary, ["samples/trips-v2.csv", "samples/trips-v1.json", "samples/trips-v3.xml", "samples/trips-v1.yaml",
                                 "samples/trips-v2.jsonl"] + extra)
    }

    @Test("a tar.zst archive (the zstd tool's) reads as its members unpacked, in the archive's order, and says them in -v", .needsPython3, .needsZstd)
    func sameAsUnpackedZstd() throws {
        try sameAsUnpacked(kind: "tar.zst")
    }

    @Test("every kind of archive reads as its members unpacked, in the archive's order, and says them in -v", .needsPython3,
          arguments: ["tar", "tar.gz", "tar.bz2", "tar.xz", "zip", "zip-deflated"])
    func sameAsUnpacked(kind: String) throws {
        let dir = try CLI.temporaryDirectory()
        let name = kind.hasPrefix("zip") ? "backup.zip" : "backup." + kind
        let path = dir.appendingPathComponent(name).path
        if kind == "tar.zst" {
            let zstd = try #require(CLI.tool("zstd"), "zstd is not installed")
            let tar = dir.appendingPathComponent("backup.tar").path
            try Self.archive(tar, "tar", Self.mixed)
            #expect(try CLI.run(zstd, ["-q", tar, "-o", path]).status == 0)
        } else {
            try Self.archive(path, kind, Self.mixed)
        }
        let want = try Self.unpacked(["--to", "csv", "-q"])
        #expect(want.status == 0, "\(want.stderr)")
        let r = try CLI.tripconv(path, "--to", "csv", "-v")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.out == want.out)
        let order = ["2020/b.csv", "2019/a.json", "c.xml", "2021/d.yaml", "e.jsonl"]
        let lines = r.stderr.split(separator: "\n").filter { $0.hasPrefix("tripconv: \(path)!") && $0.contains("; read ") }
        #expect(lines.map { $0.dropFirst("tripconv: \(path)!".count).prefix { $0 != ":" } }.map(String.init) == order, "\(r.stderr)")
        // Without its extension, the bytes tell an archive.
        let bare = dir.appendingPathComponent("backup-no-extension").path
        try FileManager.default.copyItem(atPath: path, toPath: bare)
        #expect(try CLI.tripconv(bare, "--to", "csv", "-q").out == want.out)
        // On standard input too.
        let piped = try CLI.tripconv("--to", "csv", "-q", stdin: try Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(piped.status == 0 && piped.out == want.out, "\(piped.stderr)")
    }

    @Test("a bad record's place names the member: in the error, in --rejects and in --report", .needsPython3)
    func placesNameTheMember() throws {
        let dir = try CLI.temporaryDirectory()
        let zip = dir.appendingPathComponent("backup.zip").path
        try Self.archive(zip, "zip-deflated", ["2019/bad.jsonl=samples/trips-bad-line.jsonl", "ok.json=samples/trips-v3.json"])
        var r = try CLI.tripconv(zip, "-o", dir.appendingPathComponent("out.csv").path)
        #expect(r.status == 65)
        #expect(r.stderr.hasPrefix("tripconv: \(zip)!2019/bad.jsonl:2:"), "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("out.csv").path))
        let rejects = dir.appendingPathComponent("rejects.jsonl").path, report = dir.appendingPathComponent("report.json").path
        r = try CLI.tripconv(zip, "-o", dir.appendingPathComponent("out.csv").path, "--rejects", rejects, "--report", report)
        #expect(r.status == 0, "\(r.stderr)")
        let check = try CLI.python("""
            import sys, json
            rejects = [json.loads(l) for l in open(sys.argv[1])]
            report = json.load(open(sys.argv[2]))
            print(sorted({r['source'] for r in rejects}))
            print([i['input'] for i in report['inputs']])
            """, [rejects, report])
        #expect(check.out == "['\(zip)!2019/bad.jsonl']\n['\(zip)!2019/bad.jsonl', '\(zip)!ok.json']\n", "\(check.out)\(check.stderr)")
    }

    @Test("--output-dir writes one output per member, under the member's path; a compressed member's output drops both extensions", .needsPython3)
    func outputDirPerMember() throws {
        let dir = try CLI.temporaryDirectory()
        let tgz = dir.appendingPathComponent("backup.tgz").path
        let gz = dir.appendingPathComponent("e.jsonl.gz").path
        #expect(try CLI.python("import sys, gzip; open(sys.argv[2], 'wb').write(gzip.compress(open(sys.argv[1], 'rb').read()))",
                               ["samples/trips-v2.jsonl", gz]).status == 0)
        try Self.archive(tgz, "tar.gz", Array(Self.mixed.dropLast(2)) + ["2021/e.jsonl.gz=\(gz)"])
        let out = dir.appendingPathComponent("out").path
        let r = try CLI.tripconv(tgz, "--output-dir", out, "--to", "json", "-q")
        #expect(r.status == 0, "\(r.stderr)")
        let made = try CLI.run("/usr/bin/find", [out, "-type", "f"]).out.split(separator: "\n").map { String($0.dropFirst(out.count + 1)) }.sorted()
        #expect(made == ["2019/a.json", "2020/b.json", "2021/d.json", "2021/e.json", "c.json"], "\(made)")
        // Each output holds its member's trips, read by Python's json.
        let count = try CLI.python("import sys, json; print(len(json.load(open(sys.argv[1]))['trips']))", [out + "/2021/e.json"])
        #expect(count.out == "3\n", "\(count.out)\(count.stderr)")
    }

    @Test("under --output-dir, a member whose output another input took fails alone; the rest are written", .needsPython3)
    func memberOutputTaken() throws {
        let dir = try CLI.temporaryDirectory()
        let tar = dir.appendingPathComponent("b.tar").path
        try Self.archive(tar, "tar", ["trips-v3.json=samples/trips-v1.json", "x/a.json=samples/trips-v2.json"])
        let out = dir.appendingPathComponent("out").path
        let r = try CLI.tripconv("samples/trips-v3.json", tar, "--output-dir", out, "--jobs", "1")
        #expect(r.status == 64, "\(r.stderr)")
        #expect(r.stderr.contains("\(tar)!trips-v3.json: another input is written to \(out)/trips-v3.jsonl"), "\(r.stderr)")
        #expect(FileManager.default.fileExists(atPath: out + "/x/a.jsonl"))
        // The plain input's output is its own trips (2), not the member's (3 after merging).
        let count = try CLI.python("import sys; print(sum(1 for _ in open(sys.argv[1])))", [out + "/trips-v3.jsonl"])
        #expect(count.out == "2\n", "\(count.out)")
    }

    /// A tar with one special member, made by Python's tarfile: `type` a tarfile type constant.
    static let specialTar = """
        import sys, io, tarfile
        path, name, kind, link = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
        d = open('samples/trips-v3.jsonl', 'rb').read()
        with tarfile.open(path, 'w') as t:
            ok = tarfile.TarInfo('ok.jsonl'); ok.size = len(d); t.addfile(ok, io.BytesIO(d))
            info = tarfile.TarInfo(name); info.type = getattr(tarfile, kind); info.linkname = link
            if kind == 'REGTYPE': info.size = len(d)
            t.addfile(info, io.BytesIO(d) if kind == 'REGTYPE' else None)
        """

    @Test("hostile tar members are exit 65 naming the member, and nothing is written, even under --output-dir", .needsPython3,
          arguments: [("../evil.jsonl", "REGTYPE", "", "a '..' in a member's name"),
                      ("/tmp/evil.jsonl", "REGTYPE", "", "an absolute path"),
                      ("sub/../../evil.jsonl", "REGTYPE", "", "a '..' in a member's name"),
                      ("link.jsonl", "SYMTYPE", "/etc/passwd", "a symbolic link"),
                      ("hard.jsonl", "LNKTYPE", "ok.jsonl", "a hard link"),
                      ("fifo.jsonl", "FIFOTYPE", "", "a device, FIFO or socket"),
                      ("dev.jsonl", "CHRTYPE", "", "a device, FIFO or socket"),
                      ("inner.tar.gz", "REGTYPE", "", "an archive inside an archive"),
                      ("t.sqlite", "REGTYPE", "", "a store is read in place")])
    func hostileTar(name: String, kind: String, link: String, message: String) throws {
        let dir = try CLI.temporaryDirectory()
        let tar = dir.appendingPathComponent("h.tar").path
        #expect(try CLI.python(Self.specialTar, [tar, name, kind, link]).status == 0)
        let out = dir.appendingPathComponent("out").path
        var r = try CLI.tripconv(tar, "--output-dir", out, "-q")
        #expect(r.status == 65, "\(r.stderr)")
        #expect(r.stderr.contains("\(tar)!\(name): \(message)"), "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("out/evil.jsonl").path))
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("evil.jsonl").path))
        r = try CLI.tripconv(tar, "-o", dir.appendingPathComponent("one.csv").path, "-q")
        #expect(r.status == 65 && !FileManager.default.fileExists(atPath: dir.appendingPathComponent("one.csv").path))
    }

    @Test("hostile zips: a climbing name, a symbolic link, an encrypted member, a bad CRC; exit 65 naming the member", .needsPython3)
    func hostileZip() throws {
        let dir = try CLI.temporaryDirectory()
        let make = try CLI.python("""
            import sys, zipfile
            d = open('samples/trips-v3.jsonl', 'rb').read()
            base = sys.argv[1]
            with zipfile.ZipFile(base + '/slip.zip', 'w') as z: z.writestr('../../evil.jsonl', d)
            with zipfile.ZipFile(base + '/link.zip', 'w') as z:
                i = zipfile.ZipInfo('l.jsonl'); i.create_system = 3; i.external_attr = 0o120777 << 16; z.writestr(i, '/etc/passwd')
            with zipfile.ZipFile(base + '/enc.zip', 'w') as z: z.writestr('e.jsonl', d)
            b = bytearray(open(base + '/enc.zip', 'rb').read()); b[6] |= 1; b[b.find(b'PK\\x01\\x02') + 8] |= 1
            open(base + '/enc.zip', 'wb').write(bytes(b))
            with zipfile.ZipFile(base + '/crc.zip', 'w') as z: z.writestr('c.jsonl', d)
            b = bytearray(open(base + '/crc.zip', 'rb').read()); b[40] ^= 0xFF
            open(base + '/crc.zip', 'wb').write(bytes(b))
            """, [dir.path])
        #expect(make.status == 0, "\(make.stderr)")
        for (file, member, message) in [("slip.zip", "../../evil.jsonl", "a '..' in a member's name"), ("link.zip", "l.jsonl", "a symbolic link"),
                                        ("enc.zip", "e.jsonl", "encrypted, not supported"), ("crc.zip", "c.jsonl", "ZIP bad CRC")] {
            let path = dir.appendingPathComponent(file).path
            let r = try CLI.tripconv(path, "--output-dir", dir.appendingPathComponent("out").path, "-q")
            #expect(r.status == 65, "\(file): \(r.stderr)")
            #expect(r.stderr.contains("\(path)!\(member): ") && r.stderr.contains(message), "\(file): \(r.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("evil.jsonl").path))
        #expect(!FileManager.default.fileExists(atPath: dir.deletingLastPathComponent().appendingPathComponent("evil.jsonl").path))
    }

    @Test("a truncated .tar.gz is exit 65 naming the member it ended in (or the end) and the compressed byte; nothing is written", .needsPython3,
          arguments: [(0.5, "!a.jsonl: the archive's gzip data ends early, at byte "), (-30, ": after the archive's last member: gzip data ends early, at byte ")])
    func truncated(cut: Double, message: String) throws {
        let dir = try CLI.temporaryDirectory()
        let tgz = dir.appendingPathComponent("t.tar.gz").path
        // A member bigger than gzip's first block, so that half the file ends inside it.
        let big = dir.appendingPathComponent("big.jsonl").path
        #expect(try CLI.python("""
            import sys, json
            with open(sys.argv[1], 'w') as f:
                for i in range(3000):
                    trip = {'name': 'trip %d' % i, 'destination': 'x%d' % (i * 7919 % 1000),
                            'startDate': '2024-01-01T00:00:00Z', 'endDate': '2024-01-0%dT00:00:00Z' % (i % 9 + 1)}
                    f.write(json.dumps(trip) + '\\n')
            """, [big]).status == 0)
        try Self.archive(tgz, "tar.gz", ["a.jsonl=\(big)", "b.json=samples/trips-v1.json"])
        let whole = try Data(contentsOf: URL(fileURLWithPath: tgz))
        let keep = cut < 0 ? whole.count + Int(cut) : Int(Double(whole.count) * cut)
        try whole.prefix(keep).write(to: URL(fileURLWithPath: tgz))
        let r = try CLI.tripconv(tgz, "-o", dir.appendingPathComponent("o.csv").path)
        #expect(r.status == 65, "\(r.stderr)")
        #expect(r.stderr.contains("tripconv: \(tgz)\(message)"), "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("o.csv").path))
    }

    @Test("a decompression bomb is refused past the ratio; --max-expansion-ratio and --max-expanded-size move the limits", .needsPython3)
    func bombs() throws {
        let dir = try CLI.temporaryDirectory()
        // 80 MiB of spaces and one trip: about 80 KiB compressed, 1000 times over.
        let bomb = dir.appendingPathComponent("bomb.jsonl.gz").path
        #expect(try CLI.python("""
            import sys, gzip
            with gzip.open(sys.argv[1], 'wb') as g:
                for i in range(80): g.write(b' ' * (1 << 20) + b'\\n')
                g.write(open('samples/trips-v3.jsonl', 'rb').read())
            """, [bomb]).status == 0)
        var r = try CLI.tripconv(bomb, "-q", "--to", "csv")
        #expect(r.status == 65, "\(r.stderr)")
        #expect(r.stderr.contains("\(bomb): its gzip data expands more than 200 times") && r.stderr.contains("--max-expansion-ratio"), "\(r.stderr)")
        r = try CLI.tripconv(bomb, "-q", "--max-expansion-ratio", "0")
        #expect(r.status == 0 && r.out.split(separator: "\n").count == 2, "\(r.stderr)")
        // The total, for an archive's members together.
        let zip = dir.appendingPathComponent("small.zip").path
        try Self.archive(zip, "zip-deflated", ["a.jsonl=samples/trips-v3.jsonl", "b.jsonl=samples/trips-v2.jsonl"])
        r = try CLI.tripconv(zip, "-q", "--to", "csv", "--max-expanded-size", "1K")
        #expect(r.status == 65 && r.stderr.contains("expands past 1024 bytes") && r.stderr.contains("--max-expanded-size"), "\(r.stderr)")
        r = try CLI.tripconv(zip, "-q", "--to", "csv", "--max-expanded-size", "0")
        #expect(r.status == 0, "\(r.stderr)")
    }

    @Test("hidden members, macOS's __MACOSX and unknown extensions are passed over; --from reads every member; a UTF-8 name is kept", .needsPython3)
    func passedOver() throws {
        let dir = try CLI.temporaryDirectory()
        let zip = dir.appendingPathComponent("mac.zip").path
        try Self.archive(zip, "zip", ["Tromsø/trips.jsonl=samples/trips-v3.jsonl", "__MACOSX/Tromsø/._trips.jsonl=:\u{0}\u{5}junk",
                                      ".hidden.jsonl=:junk", "notes.md=:junk"])
        var r = try CLI.tripconv("detect", zip)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.out == "\(zip)!Tromsø/trips.jsonl: jsonl 3.0.0 (fields startDate, endDate), in a zip archive, 2 trips, 0 names repeated\n", "\(r.out)")
        let all = dir.appendingPathComponent("all.tar").path
        try Self.archive(all, "tar", ["a.txt=samples/trips-v3.jsonl", "b=samples/trips-v2.jsonl"])
        r = try CLI.tripconv(all, "--from", "jsonl", "-q")
        // 2 trips and 3, one name shared.
        #expect(r.status == 0 && r.out.split(separator: "\n").count == 4, "\(r.stderr)")
    }

    @Test("an archive with no member to read says so, in convert, --output-dir and detect; a run with nothing else fails (66), writing nothing", .needsPython3)
    func nothingToRead() throws {
        let dir = try CLI.temporaryDirectory()
        let zip = dir.appendingPathComponent("notes.zip").path
        try Self.archive(zip, "zip", ["a.md=:text", "b.txt=:more"])
        let warning = "tripconv: \(zip): no member to read (2 files with no format's extension; --from FORMAT reads every member as FORMAT)\n"
        let failure = "tripconv: nothing to read in the inputs given"
        var r = try CLI.tripconv(zip, "-o", dir.appendingPathComponent("o.csv").path)
        #expect(r.status == 66 && r.stderr == warning + failure + "; nothing written\n", "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("o.csv").path))
        for format in ["json", "xml", "sqlite"] {
            let out = dir.appendingPathComponent("o." + format).path
            r = try CLI.tripconv(zip, format == "sqlite" ? "-o" : "--to", format == "sqlite" ? out : format)
            #expect(r.status == 66 && r.out.isEmpty && !FileManager.default.fileExists(atPath: out), "\(format): \(r.stderr)")
        }
        r = try CLI.tripconv(zip, "--output-dir", dir.appendingPathComponent("out").path)
        #expect(r.status == 66 && r.stderr.hasPrefix(warning), "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("out").path))
        r = try CLI.tripconv("detect", zip)
        #expect(r.status == 66 && r.stderr == warning + failure + "\n" && r.out.isEmpty, "\(r.stderr)")
        // Among inputs with trips, it is said and the run goes on; the summary has no empty part.
        r = try CLI.tripconv(zip, "samples/trips-v3.jsonl", "-o", dir.appendingPathComponent("o.csv").path)
        #expect(r.status == 0 && r.stderr.hasPrefix(warning) && r.stderr.contains("from 1 input; jsonl 3.0.0"), "\(r.stderr)")
    }

    @Test("detect --json names the archive, its format and compression, and the member", .needsPython3)
    func detectJSON() throws {
        let dir = try CLI.temporaryDirectory()
        let tgz = dir.appendingPathComponent("b.tar.xz").path
        try Self.archive(tgz, "tar.xz", ["x/a.json=samples/trips-v1.json"])
        let r = try CLI.tripconv("detect", "--json", tgz)
        #expect(r.status == 0, "\(r.stderr)")
        let parsed = try CLI.run(try ExternalTool.program("python3"),
                                 ["-c", "import sys, json; a = json.load(sys.stdin)[0]; print(a['input'], sorted(a['archive'].items()), a['compression'])"],
                                 stdin: r.stdout)
        #expect(parsed.out == "\(tgz)!x/a.json [('compression', 'xz'), ('format', 'tar'), ('member', 'x/a.json'), ('path', '\(tgz)')] None\n",
                "\(parsed.out)\(parsed.stderr)")
    }
}

/// The archived and compressed samples (samples/make-archives.py) read as Python unpacks them.
@Suite("archived samples")
struct ArchivedSampleTests {
    @Test("samples/backup-2021.tar.gz reads as its members unpacked by Python's tarfile and gzip, in the archive's order", .needsPython3)
    func backupSample() throws {
        let dir = try CLI.temporaryDirectory()
        let listed = try CLI.python("""
            import sys, tarfile, gzip, os
            with tarfile.open('samples/backup-2021.tar.gz') as t:
                for m in t.getmembers():
                    base = os.path.basename(m.name)
                    if not m.isfile() or base.startswith('.') or not base.endswith(('.json', '.csv', '.xml', '.yaml', '.jsonl.gz')):
                        continue
                    data = t.extractfile(m).read()
                    name = m.name.replace('/', '_')
                    if name.endswith('.gz'):
                        data, name = gzip.decompress(data), name[:-3]
                    open(os.path.join(sys.argv[1], name), 'wb').write(data)
                    print(os.path.join(sys.argv[1], name))
            """, [dir.path])
        #expect(listed.status == 0, "\(listed.stderr)")
        let files = listed.out.split(separator: "\n").map(String.init)
        #expect(files.count == 5)
        let unpacked = try CLI.run(CLI.binary, files + ["--to", "jsonl", "-q"])
        let archived = try CLI.tripconv("samples/backup-2021.tar.gz", "--to", "jsonl", "-q")
        #expect(archived.status == 0 && unpacked.status == 0, "\(archived.stderr)\(unpacked.stderr)")
        #expect(archived.out == unpacked.out && !archived.out.isEmpty)
        let plain = try CLI.tripconv("samples/trips-v1.json", "--to", "csv", "-q")
        #expect(try CLI.tripconv("samples/compressed-v1.json.gz", "--to", "csv", "-q").out == plain.out)
    }
}

/// Standard input redirected from a file (`< file`), not a pipe: looking at its first bytes for an
/// archive must not move it (a YAML input read twice from there was read from its 513th byte, and
/// came out as no trips with exit 0, before the look became a pread).
@Suite("standard input from a file")
struct RedirectedStandardInputTests {
    @Test("a redirected file reads as the file does: YAML (read twice), gzip-compressed JSON Lines, and an archive",
          arguments: [("samples/trips-v3.yaml", "--from yaml"), ("samples/compressed-v1.json.gz", "--from json"),
                      ("samples/backup-2021.tar.gz", "")])
    func redirected(file: String, from: String) throws {
        let direct = try CLI.run(CLI.binary, [file, "-q", "--to", "jsonl"] + from.split(separator: " ").map(String.init))
        #expect(direct.status == 0 && !direct.out.isEmpty, "\(direct.stderr)")
        let r = try CLI.run("/bin/sh", ["-c", "tripconv \(from) -q --to jsonl < \(file)"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.out == direct.out)
        // Standing part-way into the file, as after a shell's `read`: read from there.
        if file.hasSuffix(".yaml") {
            let rest = try CLI.run("/bin/sh", ["-c", "{ read -r first; tripconv --from yaml -q --to jsonl; } < \(file)"])
            #expect(rest.status == 0 && rest.out == direct.out, "\(rest.stderr)")
        }
    }
}
