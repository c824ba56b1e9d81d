-- Builds samples/coredata-v1.store: a Core Data SQLite store of the SampleTrips model at 1.0.0,
-- laid out as Core Data lays out the stores it creates (SwiftData's default.store is one): a table per
-- entity named Z + the entity's name in capitals (ZTRIP, ZBUCKETLISTITEM, ZLIVINGACCOMMODATION) with
-- Z_PK, Z_ENT and Z_OPT, then integer columns (to-one foreign keys among them), then TIMESTAMP and
-- VARCHAR ones; Z_PRIMARYKEY numbering the entities in name order with Z_MAX the last key used;
-- Z_METADATA with the store's metadata as a binary plist; Z_MODELCACHE; an index per to-one foreign key;
-- dates as seconds since 2001-01-01; Booleans as 0 and 1; the file in WAL mode.
--
-- How it was made: this script was written (with a small Python generator for the date numbers and
-- the plist) from Core Data's SQLite layout as write-ups of the format describe it and as stores made
-- by Core Data and SwiftData show it; no Apple framework produced it, so the model hashes in the
-- plist are stand-ins. tripconv finds the tables, columns and entity numbers by name, reads the store
-- read-only and never changes it.
--
-- Rebuild:  rm -f samples/coredata-v1.store && sqlite3 samples/coredata-v1.store < samples/make-coredata-v1.sql
--
-- 1.0.0: ZSTART_DATE and ZEND_DATE, names may repeat (no unique index), relationships nullify. The app
-- set no model version identifier (NSStoreModelVersionIdentifiers is [""]), so the columns tell the
-- version. 'Paris Getaway' and 'Tokyo Food Tour' occur twice; the Northern Lights trip (Z_PK 7) was
-- deleted, so Z_MAX for Trip is 7 with six rows, and its bucket-list item is left with ZTRIP NULL.
--
-- The Z_PLIST blob below is this dictionary as a binary property list, made with Python:
--   plistlib.dumps(d, fmt=plistlib.FMT_BINARY, sort_keys=True)
--   NSPersistenceFrameworkVersion: 1338
--   NSStoreModelVersionChecksumKey: '9372c470eeadd5ecd9c3c74c2b3cb633f8e2f2fad799'
--   NSStoreModelVersionHashes: {BucketListItem: <32 bytes>, LivingAccommodation: <32 bytes>, Trip: <32 bytes>}
--   NSStoreModelVersionHashesDigest: '0bf474896363505e5ea5e5d6ace8ebfb13a760a409b1fb467d428fc716f9f284'
--   NSStoreModelVersionHashesVersion: 3
--   NSStoreModelVersionIdentifiers: ['']
--   NSStoreType: 'SQLite'
--   NSStoreUUID: 'D3A1C0DE-0001-4A5B-9C3D-1E2F3A4B5C6D'
--   _NSAutoVacuumLevel: '2'

PRAGMA journal_mode = WAL;
PRAGMA page_size = 4096;
BEGIN;

CREATE TABLE ZBUCKETLISTITEM ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZHASRESERVATION INTEGER, ZISINPLAN INTEGER, ZTRIP INTEGER, ZDETAILS VARCHAR, ZTITLE VARCHAR );
CREATE TABLE ZLIVINGACCOMMODATION ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZTRIP INTEGER, ZADDRESS VARCHAR, ZPLACENAME VARCHAR );
CREATE TABLE ZTRIP ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZLIVINGACCOMMODATION INTEGER, ZSTART_DATE TIMESTAMP, ZEND_DATE TIMESTAMP, ZNAME VARCHAR, ZDESTINATION VARCHAR );
CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER);
CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB);
CREATE TABLE Z_MODELCACHE (Z_CONTENT BLOB);
CREATE INDEX ZBUCKETLISTITEM_ZTRIP_INDEX ON ZBUCKETLISTITEM (ZTRIP);
CREATE INDEX ZLIVINGACCOMMODATION_ZTRIP_INDEX ON ZLIVINGACCOMMODATION (ZTRIP);
CREATE INDEX ZTRIP_ZLIVINGACCOMMODATION_INDEX ON ZTRIP (ZLIVINGACCOMMODATION);

INSERT INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES
  (1, 'BucketListItem', 0, 13),
  (2, 'LivingAccommodation', 0, 4),
  (3, 'Trip', 0, 7);
INSERT INTO Z_METADATA (Z_VERSION, Z_UUID, Z_PLIST) VALUES (1, 'D3A1C0DE-0001-4A5B-9C3D-1E2F3A4B5C6D', X'62706C6973743030D90102030405060708090A0B0C1314151718195F101D4E5350657273697374656E63654672616D65776F726B56657273696F6E5F101E4E5353746F72654D6F64656C56657273696F6E436865636B73756D4B65795F10194E5353746F72654D6F64656C56657273696F6E4861736865735F101F4E5353746F72654D6F64656C56657273696F6E4861736865734469676573745F10204E5353746F72654D6F64656C56657273696F6E48617368657356657273696F6E5F101E4E5353746F72654D6F64656C56657273696F6E4964656E746966696572735B4E5353746F7265547970655B4E5353746F7265555549445F10125F4E534175746F56616375756D4C6576656C11053A5F102C3933373263343730656561646435656364396333633734633262336362363333663865326632666164373939D30D0E0F1011125E4275636B65744C6973744974656D5F10134C6976696E674163636F6D6D6F646174696F6E54547269704F10208CDDCDD8A953DC84832E77310B3B70FD6BC17281C39A71C4060BF8FE2DCCCA094F102063605F2BD6AAE8806966E5146323CBEE180EE215910CF422813CACF8381FEC8C4F1020BD13D5A0906BE48EF7377331F9AF5AE9D641FD39AB9F16F8BCEDBFA234BEB1625F1040306266343734383936333633353035653565613565356436616365386562666231336137363061343039623166623436376434323866633731366639663238341003A116505653514C6974655F102444334131433044452D303030312D344135422D394333442D31453246334134423543364451320008001B003B005C0078009A00BD00DE00EA00F6010B010E013D014401530169016E019101B401D7021A021C021E021F0226024D0000000000000201000000000000001A0000000000000000000000000000024F');
INSERT INTO Z_MODELCACHE (Z_CONTENT) VALUES (X'E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855');

INSERT INTO ZTRIP (Z_PK, Z_ENT, Z_OPT, ZLIVINGACCOMMODATION, ZSTART_DATE, ZEND_DATE, ZNAME, ZDESTINATION) VALUES
  (1, 3, 3, 1, 736248600.0, 736884000.0, 'Paris Getaway', 'Paris, France'),
  (2, 3, 2, 2, 747968400.0, 748701000.0, 'Tokyo Food Tour', 'Tokyo, Japan'),
  (3, 3, 1, NULL, 736248600.0, 736948800.0, 'Paris Getaway', 'Paris, France'),
  (4, 3, 1, 3, 741942000.0, 742579200.0, 'Hiking the Dolomites', 'Cortina d''Ampezzo, Italy'),
  (5, 3, 1, 4, 747968400.0, 748775700.0, 'Tokyo Food Tour', 'Tokyo, Japan'),
  (6, 3, 4, NULL, 749756700.25, 749941800.0, 'Weekend in Lisbon', 'Lisbon, Portugal');
INSERT INTO ZBUCKETLISTITEM (Z_PK, Z_ENT, Z_OPT, ZHASRESERVATION, ZISINPLAN, ZTRIP, ZDETAILS, ZTITLE) VALUES
  (1, 1, 1, 1, 1, 1, 'Summit tickets for 20:30', 'Eiffel Tower at sunset'),
  (2, 1, 1, 1, 0, 1, 'Enter by the Carrousel entrance', 'Louvre'),
  (3, 1, 1, 0, 1, 1, '', 'Croissants at Du Pain et des Idées'),
  (4, 1, 1, 0, 1, 2, 'Tamagoyaki and uni for breakfast', 'Tsukiji outer market'),
  (5, 1, 1, 0, 0, 2, 'Fuunji, tsukemen', 'Ramen in Shinjuku'),
  (6, 1, 1, 1, 1, 3, 'Summit tickets for 21:00', 'Eiffel Tower at sunset'),
  (7, 1, 1, 0, 1, 3, 'Impressionists, 5th floor', 'Musée d''Orsay'),
  (8, 1, 1, 1, 0, 3, '', 'Seine river cruise'),
  (9, 1, 1, 0, 1, 5, 'Fuunji, tsukemen; go before 11:00', 'Ramen in Shinjuku'),
  (10, 1, 1, 0, 0, 5, 'Basement food hall', 'Depachika at Isetan'),
  (11, 1, 1, 0, 1, 6, 'Board at Martim Moniz', 'Tram 28'),
  (12, 1, 1, 0, 1, 6, '', 'Pastéis de Belém'),
  (13, 1, 1, 1, 1, NULL, 'Minibus from the harbour at 18:00', 'Aurora safari');
INSERT INTO ZLIVINGACCOMMODATION (Z_PK, Z_ENT, Z_OPT, ZTRIP, ZADDRESS, ZPLACENAME) VALUES
  (1, 2, 1, 1, '12 Rue de Rivoli, 75004 Paris', 'Hôtel du Marais'),
  (2, 2, 1, 2, '1-1-1 Shibuya, Tokyo', 'Shibuya Stream Excel Hotel'),
  (3, 2, 1, 4, 'Località Passo Falzarego', 'Rifugio Lagazuoi'),
  (4, 2, 1, 5, '3-7-1-2 Nishi-Shinjuku, Tokyo', 'Park Hyatt Tokyo');

COMMIT;
