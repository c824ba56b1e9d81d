import Foundation
import Testing

/// The README's install and uninstall steps, run as they stand in README.md (so the two cannot
/// drift), and its migrate transcript, which must leave the sample store as it is (issue 25, item 13).
@Suite("Installing, from the README")
struct InstallTests {
    static let readme: String = (try? String(contentsOf: CLI.root.appendingPathComponent("README.md"), encoding: .utf8)) ?? ""

    /// The `sh` block right after the README's `<!-- marker` comment.
    static func block(after marker: String) -> String? {
        guard let at = readme.range(of: "<!-- " + marker),
              let start = readme.range(of: "```sh\n", range: at.upperBound..<readme.endIndex),
              let end = readme.range(of: "\n```\n", range: start.upperBound..<readme.endIndex) else { return nil }
        return String(readme[start.upperBound..<end.lowerBound])
    }

    static let installed = ["bin/tripconv", "share/man/man1/tripconv.1", "share/bash-completion/completions/tripconv",
                            "share/zsh/site-functions/_tripconv", "share/fish/vendor_completions.d/tripconv.fish", "bin/tripconv-swift-model"]

    @Test("the README's install step puts the binary, the manual and completions under PREFIX; its uninstall step removes them",
          .enabled(if: CLI.tool("man") != nil, "man (man-db) checks that the installed page is found"))
    func installAndUninstall() throws {
        guard let install = Self.block(after: "install step"), let uninstall = Self.block(after: "uninstall step") else {
            Issue.record("README.md has no install and uninstall step")
            return
        }
        // A checkout as the step sees it after the README's build: the release binary and the manual.
        let tmp = try CLI.temporaryDirectory()
        let checkout = tmp.appendingPathComponent("checkout"), prefix = tmp.appendingPathComponent("prefix with space")
        try FileManager.default.createDirectory(at: checkout.appendingPathComponent(".build/release"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: checkout.appendingPathComponent("man"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: CLI.binary, toPath: checkout.appendingPathComponent(".build/release/tripconv").path)
        try FileManager.default.copyItem(atPath: CLI.binary + "-swift-model",
                                         toPath: checkout.appendingPathComponent(".build/release/tripconv-swift-model").path)
        try FileManager.default.copyItem(at: CLI.root.appendingPathComponent("man/tripconv.1"),
                                         to: checkout.appendingPathComponent("man/tripconv.1"))

        let ran = try CLI.run("/bin/sh", ["-c", install], directory: checkout, environment: ["PREFIX": prefix.path])
        #expect(ran.status == 0, "\(ran.stderr)")
        for path in Self.installed {
            let size = (try? FileManager.default.attributesOfItem(atPath: prefix.appendingPathComponent(path).path)[.size] as? Int) ?? 0
            #expect(size > 0, "\(path) not installed")
        }
        // On the PATH, the installed binary runs; man finds the page; the completions are for tripconv.
        let version = try CLI.run("/bin/sh", ["-c", "PATH=\"$PREFIX/bin:/usr/bin:/bin\"; command -v tripconv && tripconv --version"],
                                  directory: tmp, environment: ["PREFIX": prefix.path])
        #expect(version.out == prefix.path + "/bin/tripconv\ntripconv 0.1.0\n", "\(version.out)\(version.stderr)")
        let man = try CLI.run(CLI.tool("man")!, ["-M", prefix.appendingPathComponent("share/man").path, "-w", "tripconv"])
        #expect(man.out == prefix.appendingPathComponent("share/man/man1/tripconv.1").path + "\n", "\(man.out)\(man.stderr)")
        let bash = try String(contentsOf: prefix.appendingPathComponent(Self.installed[2]), encoding: .utf8)
        #expect(bash.contains("complete -o filenames -F _tripconv tripconv") || bash.contains("-F _tripconv tripconv"), "\(bash.suffix(200))")
        #expect(try CLI.run("/bin/bash", ["-n", prefix.appendingPathComponent(Self.installed[2]).path]).status == 0)
        let zsh = try String(contentsOf: prefix.appendingPathComponent(Self.installed[3]), encoding: .utf8)
        #expect(zsh.hasPrefix("#compdef tripconv"))
        let fish = try String(contentsOf: prefix.appendingPathComponent(Self.installed[4]), encoding: .utf8)
        #expect(fish.contains("complete -c 'tripconv'") || fish.contains("complete -c tripconv"))

        let removed = try CLI.run("/bin/sh", ["-c", uninstall], directory: checkout, environment: ["PREFIX": prefix.path])
        #expect(removed.status == 0, "\(removed.stderr)")
        let left = FileManager.default.enumerator(atPath: prefix.path)?.compactMap { $0 as? String }.filter { path in
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: prefix.appendingPathComponent(path).path, isDirectory: &isDirectory) && !isDirectory.boolValue
        } ?? []
        #expect(left.isEmpty, "left behind: \(left)")
    }

    @Test("the README's migrate transcript runs on a copy and leaves the sample store as it is")
    func migrateTranscript() throws {
        let blocks = Self.readme.components(separatedBy: "```console\n").dropFirst().map { $0.components(separatedBy: "\n```")[0] }
        guard let transcript = blocks.first(where: { $0.contains("$ tripconv migrate trips-v1.sqlite") }) else {
            Issue.record("no migrate transcript in README.md")
            return
        }
        let commands = transcript.split(separator: "\n").filter { $0.hasPrefix("$ ") }.map { $0.dropFirst(2) }
        let tmp = try CLI.temporaryDirectory()
        try FileManager.default.createSymbolicLink(at: tmp.appendingPathComponent("samples"), withDestinationURL: CLI.root.appendingPathComponent("samples"))
        let sample = CLI.root.appendingPathComponent("samples/trips-v1.sqlite")
        let before = try Data(contentsOf: sample)
        for command in commands {
            let r = try CLI.run("/bin/sh", ["-c", String(command)], directory: tmp)
            #expect(r.status == 0, "\(command): \(r.stderr)")
        }
        #expect(try Data(contentsOf: sample) == before, "the transcript changed samples/trips-v1.sqlite")
    }
}
