#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import TripKit

/// Standard error, where every diagnostic goes; data only ever goes to standard output.
enum Diagnostics {
    static func print(_ line: String) {
        writeAll(2, line + "\n")
    }

    /// Prints the error's line and its notes.
    static func print(_ error: TripError) {
        print("tripconv: \(error.message)")
        for n in error.notes { print("note: \(n)") }
    }

    /// Prints the error's line and its notes, and gives the exit status its kind maps to.
    static func fail(_ error: any Error) -> ExitCode {
        if let e = error as? TripError {
            print(e)
            return ExitCode(e.kind.rawValue)
        }
        if let e = error as? ExitCode { return e }
        print("tripconv: \(error)")
        return ExitCode(70)
    }
}

/// Runs a command body, mapping errors to exit statuses once, at the top.
func runReportingErrors(_ body: () throws -> Void) throws {
    do {
        try body()
    } catch let error as ExitCode {
        throw error
    } catch {
        throw Diagnostics.fail(error)
    }
}

/// Writes all of a text to a file descriptor (1 standard output, 2 standard error).
func writeAll(_ fd: Int32, _ text: String) {
    var t = text
    t.withUTF8 { buf in
        var offset = 0
        while offset < buf.count {
            let n = write(fd, buf.baseAddress! + offset, buf.count - offset)
            if n < 0 { if errno == EINTR { continue }; return }
            offset += n
        }
    }
}

/// Lines for standard output, written in pieces of 64 KiB as they come: a dry run's preview of a store
/// of any size is printed in bounded memory (`migrate --dry-run`, of trips and of objects).
final class OutputLines {
    private var text = ""

    /// Adds `line` and its newline; writes what is held once it passes 64 KiB.
    func emit(_ line: String) {
        text += line + "\n"
        if text.utf8.count >= 1 << 16 { flush() }
    }

    /// Writes what is held.
    func flush() {
        writeAll(1, text)
        text = ""
    }
}
