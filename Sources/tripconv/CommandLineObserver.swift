import TripKit
import TripFormats

/// How the command line watches a run: the progress bar's current file and trip count, a line per
/// record set aside (with -v, where the command lists them), and a failed bulk input's error.
struct CommandLineObserver: RunObserver {
    var progress: ProgressBar? = nil
    /// Whether each record set aside gets a line (`convert -v` and `migrate -v`; a bulk run's
    /// inputs do not).
    var listsSetAside: Bool
    /// Whether a run that spills says so as it starts to (`-v`).
    var verbose = false

    func starting(_ input: RunInput) { progress?.setCurrent(input.location.name) }

    func entering(_ phase: RunPhase) { progress?.enter(phase) }

    func reading(_ reader: any RecordReader) -> any RecordReader { CountingReader(base: reader) }

    func settingAside(_ record: SetAsideRecord) {
        if listsSetAside { Diagnostics.print("tripconv: \(record.place): \(record.kind.rawValue): \(record.reason)") }
    }

    func failed(_ input: RunInput, error: TripError) { Diagnostics.print(error) }
    func foundNothing(in archive: RunInput, passedOver: Int) {
        Diagnostics.print(InputResolver.nothingFound(in: archive, passedOver: passedOver))
    }

    func spilling(memoryLimit: Int, directory: String) {
        guard verbose else { return }
        Diagnostics.print("tripconv: the trips held passed half of --memory-limit \(sizeText(memoryLimit)); "
                          + "going on with temporary files in \(directory)")
    }
}

/// A size as `--memory-limit` takes it back: `1 GiB`, `256 MiB`.
func sizeText(_ bytes: Int) -> String {
    if bytes >= 1 << 30, bytes % (1 << 30) == 0 { return "\(bytes >> 30) GiB" }
    return "\((bytes + (1 << 19)) >> 20) MiB"
}
