import Foundation
import Testing
import TripKit
import TripTestSupport
@testable import TripFormats

/// Compressed inputs written by programs that are not ours (Python's gzip, bz2 and lzma modules, the
/// zstd tool), damaged by a fixed-seed set of mutations, each read as JSON Lines to the end (issue 17).
///
/// What holds, and what does not (each case below says which):
/// - Never a crash, a hang or an error other than a `TripError`; every error is `.data` (exit 65) and
///   names the file; gzip's names the compressed byte it reached, at or after the first damaged one.
/// - A read that ends without an error gives exactly the original trips. A mutation may do that
///   where the format ignores what it touched: gzip's MTIME, XFL and OS header bytes and its FTEXT
///   flag.
/// - A first byte no longer magic makes the file plain text: the JSON Lines reader rejects its
///   lines, never reads a trip from them. Cut to 0 bytes it is an empty input: no trips, no error.
/// - Not guaranteed, inherent in the format: a zstd frame written without its checksum
///   (`zstd --no-check`) has nothing to find a changed literal by; damaged inside its blocks (its
///   last bytes included) it may read as other trips without an error. Cuts, appended bytes and
///   header damage are still errors.
/// - Not guaranteed, inherent in streaming with bounded memory: the trips yielded *before* the
///   error. A decoder hands over bytes before the checksum that covers them is checked (gzip's CRC-32
///   at a member's end, bzip2's after each block, xz's at a block's end, zstd's at a frame's end), so
///   a damaged member can yield wrong trips or rejections, and only then the error. The read always
///   ends in the error: the CLI commits no output of a failed run, so none of them lands. Printed
///   with a count, so it is not hidden.
/// - Found by this test and mended (`bzip2Gaps`): libarchive's bzip2 filter bids only on
///   `BZh1`-`BZh9` followed by a block's or the end's magic. A first stream whose block magic was
///   damaged was passed through as plain bytes, and a second stream damaged at its start, or cut
///   within its first 12 bytes, was dropped with its trips, exit 0. `ArchiveFilterDecoder` now
///   checks that libarchive took the filter, and that every compressed byte was taken.
@Suite("compressed inputs, mutated", .enabled(if: ExternalTool.python3 != nil, "python3 is not installed"))
struct CompressionMutationTests {
    let scratch = ScratchDirectory()

    /// A compressed file as another program writes it, and how long its container's header and
    /// trailer are (what the flips aim at).
    struct Stream: Sendable, CustomTestStringConvertible {
        let name: String
        let compression: Compression
        let file: String
        let header: Int
        let trailer: Int
        /// Whether a checksum covers the decoded data (false: `zstd --no-check`).
        let checked: Bool
        var testDescription: String { name }
    }

    /// gzip: 10-byte header, CRC-32 and length. bzip2: `BZh9`, then the first block's magic and CRC;
    /// the end-of-stream magic and CRC. xz: 12-byte stream header and footer. zstd: magic and frame
    /// header; the XXH64 checksum's 4 bytes (without it, the last block's last bytes).
    static let streams: [Stream] = [
        Stream(name: "gzip", compression: .gzip, file: "trips.jsonl.gz", header: 10, trailer: 8, checked: true),
        Stream(name: "bzip2", compression: .bzip2, file: "trips.jsonl.bz2", header: 14, trailer: 10, checked: true),
        Stream(name: "xz", compression: .xz, file: "trips.jsonl.xz", header: 12, trailer: 12, checked: true),
        Stream(name: "zstd", compression: .zstd, file: "trips.jsonl.zst", header: 6, trailer: 4, checked: true),
        Stream(name: "zstd --no-check", compression: .zstd, file: "trips-nocheck.jsonl.zst", header: 6, trailer: 4, checked: false),
    ]

    enum Mutation: String, CaseIterable, Sendable {
        case flipHeader, flipMiddle, flipTrailer, truncate, splice, duplicate, appendGarbage
    }

    /// Cases per mutation and stream: 7 × 40 = 280 per stream.
    static let casesPerMutation = 40

    /// Writes `plain.jsonl` (300 trips of varied text, 112 KB: more than one 64 KiB chunk of the
    /// reader) and its gzip, bzip2 and xz copies (Python's modules) into `dir`.
    static func makeInputs(_ dir: ScratchDirectory) throws {
        let r = try ExternalTool.python("""
            import sys, random, json, gzip, bz2, lzma, datetime
            r = random.Random(17)
            words = ['Reykjavík', 'harbour', 'museum', 'Ōsaka', 'ramen', 'trail', 'café', 'ferry', 'glacier', 'night market',
                     'hike', 'tickets', 'Kraków', 'old town', 'beach', 'train', 'Zürich', 'fondue', 'river', 'sunrise']
            def text(n): return ' '.join(r.choice(words) + ' ' + str(r.randrange(100000)) for _ in range(n))
            def date(t): return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%SZ')
            out = []
            for i in range(300):
                start = 1600000000 + r.randrange(200000000)
                items = [{'title': text(1), 'details': text(r.randrange(4)), 'hasReservation': r.random() < 0.5,
                          'isInPlan': r.random() < 0.5} for _ in range(r.randrange(4))]
                stay = {'address': text(1), 'placeName': text(1)} if r.random() < 0.7 else None
                out.append(json.dumps({'name': 'trip %d %s' % (i, text(1)), 'destination': text(1), 'startDate': date(start),
                                       'endDate': date(start + r.randrange(1, 3000000)), 'bucketList': items,
                                       'livingAccommodation': stay}, ensure_ascii=False))
            data = ('\\n'.join(out) + '\\n').encode('utf-8')
            d = sys.argv[1]
            open(d + '/plain.jsonl', 'wb').write(data)
            open(d + '/trips.jsonl.gz', 'wb').write(gzip.compress(data, mtime=0))
            open(d + '/trips.jsonl.bz2', 'wb').write(bz2.compress(data))
            open(d + '/trips.jsonl.xz', 'wb').write(lzma.compress(data))
            """, [dir.path])
        #expect(r.status == 0, "\(r.stderr)")
    }

    /// The zstd tool, for a test with the `.needsZstd` trait.
    static func zstdTool() throws -> String {
        try #require(ExternalTool.path("zstd"), "zstd is not installed")
    }

    /// Everything a reader yields (nil for a rejection) before it ends or throws.
    static func read(_ path: String) -> (trips: [ModelObject?], error: (any Error)?) {
        var got: [ModelObject?] = []
        do {
            var reader = try FormatFactory.makeReader(.file(path), format: .jsonl, options: ReadOptions())
            while let item = try reader.next() {
                if case .trip(let t) = item { got.append(t.object) } else { got.append(nil) }
            }
            return (got, nil)
        } catch {
            return (got, error)
        }
    }

    /// Whether `got` is a prefix of `original`: trips only, each equal to the original's at its place.
    static func isPrefix(_ got: [ModelObject?], of original: [ModelObject]) -> Bool {
        got.count <= original.count && zip(got, original).allSatisfy { $0 == $1 }
    }

    /// The number after `byte ` in a message, if any.
    static func byteOffset(_ message: String) -> Int? {
        message.firstMatch(of: #/byte (\d+)/#).flatMap { Int($0.1) }
    }

    /// One mutation of `bytes`, and the first offset at which the result differs from them.
    static func mutate(_ bytes: [UInt8], _ mutation: Mutation, _ stream: Stream, _ random: inout SplitMix64) -> (bytes: [UInt8], changed: Int) {
        var b = bytes
        let n = b.count
        func flip(_ at: Int) -> (bytes: [UInt8], changed: Int) {
            b[at] ^= UInt8(random.int(1...255))
            return (b, at)
        }
        switch mutation {
        case .flipHeader:
            return flip(random.below(stream.header))
        case .flipMiddle:
            return flip(stream.header + random.below(n - stream.header - stream.trailer))
        case .flipTrailer:
            return flip(n - 1 - random.below(stream.trailer))
        case .truncate:
            let length = random.below(n)
            return (Array(b[..<length]), length)
        case .splice:
            // Up to 16 bytes replaced by 1 to 32 random ones.
            let at = random.below(n)
            let removed = random.int(0...min(16, n - at))
            b.replaceSubrange(at..<at + removed, with: (0..<random.int(1...32)).map { _ in UInt8(random.below(256)) })
            return (b, at)
        case .duplicate:
            // A region of at most a quarter of the file, inserted again anywhere (never the whole
            // file after itself, which is a valid concatenation of two streams).
            let from = random.below(n)
            let length = random.int(1...min(n - from, n / 4))
            let to = random.below(n + 1)
            b.insert(contentsOf: bytes[from..<from + length], at: to)
            return (b, to)
        case .appendGarbage:
            b += (0..<random.int(1...64)).map { _ in UInt8(random.below(256)) }
            return (b, n)
        }
    }

    @Test("every mutation of a compressed file reads as the original, or as plain text, or is a data error naming the file",
          arguments: streams.filter { $0.compression != .zstd })
    func mutations(stream: Stream) throws {
        try Self.makeInputs(scratch)
        if stream.compression == .zstd {
            let zstd = try Self.zstdTool()
            let r = try ExternalTool.run(zstd, ["-q", "-f"] + (stream.checked ? [] : ["--no-check"])
                                         + [scratch.path("plain.jsonl"), "-o", scratch.path(stream.file)])
            #expect(r.status == 0, "\(r.stderr)")
        }
        let plainRead = Self.read(scratch.path("plain.jsonl"))
        let original = plainRead.trips.compactMap { $0 }
        #expect(plainRead.error == nil && original.count == 300 && plainRead.trips.count == 300)
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: scratch.path(stream.file))))
        #expect(Compression.told(by: bytes) == stream.compression)
        #expect(Self.read(scratch.path(stream.file)).trips == plainRead.trips, "the undamaged file reads as the plain one")

        var random = SplitMix64(seed: 0x17_0000 + UInt64(Self.streams.firstIndex { $0.name == stream.name }!))
        var tally: [String: Int] = [:]
        var unverifiedBeforeError: [String] = []
        var changedBeforeError = 0
        let path = scratch.path("mutated")
        for mutation in Mutation.allCases {
            for i in 0..<Self.casesPerMutation {
                let (mutated, changed) = Self.mutate(bytes, mutation, stream, &random)
                let label = "\(stream.name) \(mutation.rawValue) #\(i) (first change at byte \(changed) of \(mutated.count))"
                try Data(mutated).write(to: URL(fileURLWithPath: path))
                let (got, error) = Self.read(path)
                let told = Compression.told(by: mutated.prefix(6))
                let outcome: String
                if let error {
                    guard let e = error as? TripError else {
                        Issue.record("\(label): threw a \(type(of: error)), not a TripError: \(error)")
                        continue
                    }
                    outcome = "data error"
                    #expect(e.kind == .data && e.message.hasPrefix(path + ":"), "\(label): \(e.kind) \(e.message)")
                    if told == .gzip, e.message.contains("gzip data") {
                        let at = Self.byteOffset(e.message)
                        #expect(at.map { changed <= $0 && $0 <= mutated.count } == true, "\(label): \(e.message)")
                    } else if e.message.contains(" data is corrupt within its first ") {
                        let at = Int(e.message.split(separator: "within its first ").last!.prefix { $0.isNumber })
                        #expect(at.map { $0 <= mutated.count } == true, "\(label): \(e.message)")
                    }
                    if told == nil {
                        #expect(!got.contains(where: { $0 != nil }), "\(label): plain text read as trips")
                    } else if !Self.isPrefix(got, of: original) {
                        let changedTrips = got.filter { $0 != nil && !original.contains($0!) }.count
                        if changedTrips > 0 { changedBeforeError += 1 }
                        unverifiedBeforeError.append("\(label): \(got.count) records (\(got.filter { $0 == nil }.count) rejected, "
                                                     + "\(changedTrips) trips not the original's) before \(e.message)")
                    }
                } else if told == nil {
                    outcome = mutated.isEmpty ? "empty" : "plain text, rejected"
                    #expect(!got.contains(where: { $0 != nil }) && got.isEmpty == mutated.isEmpty, "\(label): plain text read as trips")
                } else if got == plainRead.trips {
                    outcome = "same trips"
                } else if !stream.checked && [.flipMiddle, .flipTrailer, .splice, .duplicate].contains(mutation) {
                    outcome = "other data, no checksum"
                } else {
                    outcome = "WRONG"
                    Issue.record("\(label): read without an error as \(got.count) records, not the original's 300 trips")
                }
                tally["\(mutation.rawValue): \(outcome)", default: 0] += 1
            }
        }
        print("\(stream.name), \(bytes.count) bytes, \(Mutation.allCases.count * Self.casesPerMutation) mutations:\n  "
              + tally.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: "\n  "))
        // Every class of mutation was caught at least once.
        for mutation in Mutation.allCases {
            #expect(tally["\(mutation.rawValue): data error", default: 0] > 0, "\(stream.name) \(mutation): never an error")
        }
        // gzip's CRC-32 and length, xz's footer and zstd's checksum are never ignored.
        if stream.compression != .bzip2 && stream.checked {
            #expect(tally["flipTrailer: data error"] == Self.casesPerMutation, "\(stream.name): a damaged trailer read without an error")
        }
        // A streamed decoder hands over decoded bytes before the checksum that covers them (gzip's
        // trailer may come gigabytes later): records read before the error may differ. The run
        // then fails, and its output is absent (CompressedInputCLITests "damaged"), so none of
        // them is written: that is the guarantee, not these records.
        if !unverifiedBeforeError.isEmpty {
            let example = unverifiedBeforeError.first { !$0.contains(" 0 trips not") } ?? unverifiedBeforeError[0]
            print("note: \(stream.name): \(unverifiedBeforeError.count) cases yielded records before their error, "
                  + "\(changedBeforeError) with trips not the original's; e.g. \(example)")
        }
    }

    /// The regression libarchive 3.6.2's own gzip reader has (it reads a member whose CRC-32 or
    /// length does not match as if it did; docs/RESEARCH-17.md §2), which is why gzip goes through
    /// zlib: each of the trailer's 8 bytes flipped is an error at the trailer, after every trip,
    /// each the original's (the data itself is whole).
    @Test("a flipped byte in a gzip member's CRC-32 or length is an error at the trailer")
    func gzipTrailer() throws {
        try Self.makeInputs(scratch)
        let original = Self.read(scratch.path("plain.jsonl")).trips
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: scratch.path("trips.jsonl.gz"))))
        for back in 1...8 {
            var mutated = bytes
            mutated[bytes.count - back] ^= 0x01
            let path = scratch.file("trailer-\(back).jsonl.gz", mutated)
            let (got, error) = Self.read(path)
            let e = error as? TripError
            let check = back > 4 ? "incorrect data check" : "incorrect length check"
            #expect(e?.kind == .data && e?.message.hasPrefix(path + ": gzip data is corrupt at byte ") == true
                    && e?.message.contains(check) == true, "byte -\(back): \(String(describing: error))")
            #expect(e.flatMap { Self.byteOffset($0.message) }.map { bytes.count - 8 <= $0 && $0 <= bytes.count } == true,
                    "byte -\(back): \(e?.message ?? "")")
            let whole = Self.isPrefix(got, of: original.compactMap { $0 })
            #expect(whole, "byte -\(back): \(got.count) records, not all the original's")
        }
    }

    @Test("every mutation of a file the zstd tool compressed reads as the original, or as plain text, or is a data error naming the file",
          .needsZstd, arguments: streams.filter { $0.compression == .zstd })
    func mutationsZstd(stream: Stream) throws {
        try mutations(stream: stream)
    }

    /// Two streams of one file (as `cat a b` makes), the second cut within its first bytes or with a
    /// byte of its magic flipped: the trips of the first, then an error. gzip, xz and
    /// zstd do so; bzip2 does not (see `bzip2Gaps`).
    @Test("a second stream cut short or damaged at its start is a data error, not the end of the input",
          arguments: [Compression.gzip, .xz])
    func secondStreamDamaged(compression: Compression) throws {
        try checkSecondStreamDamaged(compression)
    }

    @Test("a second zstd stream cut short or damaged at its start is a data error, not the end of the input", .needsZstd)
    func secondStreamDamagedZstd() throws {
        try checkSecondStreamDamaged(.zstd)
    }

    func checkSecondStreamDamaged(_ compression: Compression) throws {
        let (first, broken) = try concatenations(compression)
        for path in broken {
            let (got, error) = Self.read(path)
            let e = error as? TripError
            #expect(e?.kind == .data && e?.message.hasPrefix(path + ": ") == true, "\(path): \(String(describing: error))")
            let firstOnly = Self.isPrefix(got, of: first)
            #expect(firstOnly, "\(path): \(got.count) records, not all the first stream's")
        }
    }

    /// The first and second halves of `plain.jsonl`'s trips compressed apart and joined, the second
    /// cut after 3, 8 and 12 bytes and, apart, with its 3rd byte (magic) flipped: the first half's trips and
    /// the paths of the broken joins. The halves are compressed by Python, zstd's by the zstd tool.
    func concatenations(_ compression: Compression) throws -> (first: [ModelObject], broken: [String]) {
        try Self.makeInputs(scratch)
        let lines = try String(contentsOfFile: scratch.path("plain.jsonl"), encoding: .utf8).split(separator: "\n")
        let halves = [lines[..<150], lines[150...]].enumerated().map { i, half in
            scratch.file("half\(i).jsonl", half.joined(separator: "\n") + "\n")
        }
        var parts: [[UInt8]] = []
        for half in halves {
            let target = half + ".\(compression.extensions[0])"
            if compression == .zstd {
                let zstd = try Self.zstdTool()
                #expect(try ExternalTool.run(zstd, ["-q", "-f", half, "-o", target]).status == 0)
            } else {
                let module = ["gzip": "gzip", "bzip2": "bz2", "xz": "lzma"][compression.rawValue]!
                let r = try ExternalTool.python("import sys, \(module); open(sys.argv[2], 'wb').write(\(module).compress(open(sys.argv[1], 'rb').read()))",
                                                [half, target])
                #expect(r.status == 0, "\(r.stderr)")
            }
            parts.append(try [UInt8](Data(contentsOf: URL(fileURLWithPath: target))))
        }
        let first = Self.read(halves[0]).trips.compactMap { $0 }
        #expect(first.count == 150)
        var whole = parts[0] + parts[1]
        let joined = scratch.file("joined", whole)
        #expect(Self.read(joined).trips.count == 300, "\(compression): the two streams joined read whole")
        var broken = [3, 8, 12].map { cut in scratch.file("cut\(cut)", parts[0] + parts[1].prefix(cut)) }
        whole[parts[0].count + 2] ^= 0x40
        broken.append(scratch.file("flipped", whole))
        return (first, broken)
    }

    /// libarchive's bzip2 filter (3.6.2) takes a stream only where `BZh1`-`BZh9` is followed by a
    /// block's magic (`1AY&SY`) or the end's; what it did not take was not an error:
    /// - a file whose first block magic is damaged is passed through as plain bytes: the reader
    ///   rejects each line of compressed bytes and ends; `tripconv --rejects FILE` exits 0 having
    ///   written no trip and the compressed bytes as 48 rejected records (`bzip2 -t`: "data
    ///   integrity (CRC) error");
    /// - a second stream whose magic or first block magic is damaged, or cut within its first 12
    ///   bytes, is taken for trailing bytes and dropped, every trip in it lost: `tripconv` exits 0
    ///   with 150 of 300 trips (`bzip2 -t`: "data integrity (CRC) error", "file ends unexpectedly").
    /// Each is now a data error, as it is for gzip, xz and zstd: ArchiveFilterDecoder checks that
    /// libarchive took the bzip2 filter, and that no byte follows the last stream (bzip2(1) warns
    /// of them; our gzip decoder refuses them too).
    @Test("bzip2: a damaged block magic is an error, not plain text or the end of the input")
    func bzip2Gaps() throws {
        let (first, broken) = try concatenations(.bzip2)
        var firstBlock = try [UInt8](Data(contentsOf: URL(fileURLWithPath: scratch.path("trips.jsonl.bz2"))))
        firstBlock[5] ^= 0x40
        for path in broken + [scratch.file("first-block.jsonl.bz2", firstBlock)] {
            let (got, error) = Self.read(path)
            let firstOnly = Self.isPrefix(got, of: first) || !got.contains(where: { $0 != nil })
            #expect(firstOnly, "\(path): \(got.count) records, not the first stream's trips")
            #expect((error as? TripError)?.kind == .data, "\(path): read without an error as \(got.count) records")
        }
    }
}
