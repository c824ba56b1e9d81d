import Testing
@testable import TripFormats

/// PostgreSQL addresses are told from paths, and shown without their passwords (issue 16).
@Suite("PostgreSQL addresses")
struct PGAddressTests {
    @Test("URIs and libpq key=value pairs are addresses; paths are not")
    func recognised() {
        for a in ["postgresql://db/trips", "postgres://u@h:5433/d", "POSTGRESQL:///trips", "host=/run/postgresql dbname=trips",
                  "dbname=trips", "service=fleet", " host=x"] {
            #expect(Format.isPostgreSQLAddress(a), "\(a)")
            #expect(Format(path: a) == .postgresql, "\(a)")
        }
        for p in ["trips.sqlite", "dir/host=x.json", "name=x.json", "postgresql.json", "./postgres://x", "-"] {
            #expect(!Format.isPostgreSQLAddress(p), "\(p)")
        }
        #expect(Format(name: "pg") == .postgresql && Format(name: "postgres") == .postgresql && Format(name: "postgresql") == .postgresql)
        #expect(Format.postgresql.isStore)
    }

    @Test("no password survives redaction", arguments: [
        ("postgresql://ann:s3cret@db:5432/trips", "postgresql://ann@db:5432/trips"),
        ("postgres://ann:s3cret@db/trips?sslmode=require&password=s3cret", "postgres://ann@db/trips?sslmode=require"),
        ("postgresql://db/trips?password=s3cret", "postgresql://db/trips"),
        ("postgresql://ann@db/trips", "postgresql://ann@db/trips"),
        ("host=db password=s3cret dbname=trips", "host=db dbname=trips"),
        ("host=db password='s3 cret' dbname=trips", "host=db dbname=trips"),
        ("host=db dbname=trips", "host=db dbname=trips"),
    ])
    func redacted(address: String, shown: String) {
        #expect(Format.redactedPostgreSQLAddress(address) == shown)
        #expect(!Format.redactedPostgreSQLAddress(address).contains("s3"))
        #expect(InputLocation.file(address).name == shown)
    }
}
