-- Builds samples/trips-v1.sqlite: a SampleTrips 1.0.0 store in tripconv's layout, as an older
-- version of the app left it: six trips, two of whose names ('Paris Getaway', 'Tokyo Food Tour')
-- occur twice with different bucket lists and accommodations, one trip with an empty bucket list,
-- one without an accommodation, a date with milliseconds, and one bucket-list item whose trip was
-- deleted (1.0.0's delete rule is nullify, so its trip_id is NULL and no trip lists it).
--
-- Rebuild:  rm -f samples/trips-v1.sqlite && sqlite3 samples/trips-v1.sqlite < samples/make-trips-v1-sqlite.sql
--
-- The CREATE statements are the ones tripconv derives from TripSchemaV1 (SQLiteStore.createStatements)
-- and its metadata tables; a test checks that they still agree.

PRAGMA foreign_keys = ON;
BEGIN;

CREATE TABLE "trips" (
  "id" INTEGER PRIMARY KEY,
  "name" TEXT NOT NULL,
  "destination" TEXT NOT NULL,
  "start_date" TEXT NOT NULL,
  "end_date" TEXT NOT NULL
);
CREATE TABLE "bucket_list_items" (
  "id" INTEGER PRIMARY KEY,
  "trip_id" INTEGER REFERENCES "trips" ("id") ON DELETE SET NULL,
  "position" INTEGER NOT NULL,
  "title" TEXT NOT NULL,
  "details" TEXT NOT NULL DEFAULT '',
  "hasReservation" INTEGER NOT NULL DEFAULT 0 CHECK ("hasReservation" IN (0, 1)),
  "isInPlan" INTEGER NOT NULL DEFAULT 0 CHECK ("isInPlan" IN (0, 1))
);
CREATE INDEX "bucket_list_items_trip_id" ON "bucket_list_items" ("trip_id", "position");
CREATE TABLE "living_accommodations" (
  "id" INTEGER PRIMARY KEY,
  "trip_id" INTEGER UNIQUE REFERENCES "trips" ("id") ON DELETE SET NULL,
  "address" TEXT NOT NULL DEFAULT '',
  "placeName" TEXT NOT NULL DEFAULT ''
);
CREATE TABLE "tripconv_metadata" (
  "key" TEXT PRIMARY KEY,
  "value" TEXT NOT NULL
);
CREATE TABLE "tripconv_migrations" (
  "id" INTEGER PRIMARY KEY,
  "from_version" TEXT NOT NULL,
  "to_version" TEXT NOT NULL,
  "applied_at" TEXT NOT NULL,
  "tool_version" TEXT NOT NULL,
  "stages" TEXT NOT NULL,
  "trips_before" INTEGER NOT NULL,
  "trips_after" INTEGER NOT NULL
);

INSERT INTO "tripconv_metadata" ("key", "value") VALUES
  ('schemaVersion', '1.0.0'),
  ('createdBy', 'tripconv 0.1.0');

INSERT INTO "trips" ("id", "name", "destination", "start_date", "end_date") VALUES
  (1, 'Paris Getaway', 'Paris, France', '2024-05-01T09:30:00Z', '2024-05-08T18:00:00Z'),
  (2, 'Tokyo Food Tour', 'Tokyo, Japan', '2024-09-14T01:00:00Z', '2024-09-22T12:30:00Z'),
  (3, 'Paris Getaway', 'Paris, France', '2024-05-01T09:30:00Z', '2024-05-09T12:00:00Z'),
  (4, 'Hiking the Dolomites', 'Cortina d''Ampezzo, Italy', '2024-07-06T07:00:00Z', '2024-07-13T16:00:00Z'),
  (5, 'Tokyo Food Tour', 'Tokyo, Japan', '2024-09-14T01:00:00Z', '2024-09-23T09:15:00Z'),
  (6, 'Weekend in Lisbon', 'Lisbon, Portugal', '2024-10-04T17:45:00.250Z', '2024-10-06T21:10:00Z'),
  (7, 'Northern Lights', 'Tromsø, Norway', '2023-12-28T14:00:00Z', '2024-01-03T10:00:00Z');

INSERT INTO "bucket_list_items" ("trip_id", "position", "title", "details", "hasReservation", "isInPlan") VALUES
  (1, 0, 'Eiffel Tower at sunset', 'Summit tickets for 20:30', 1, 1),
  (1, 1, 'Louvre', 'Enter by the Carrousel entrance', 1, 0),
  (1, 2, 'Croissants at Du Pain et des Idées', '', 0, 1),
  (2, 0, 'Tsukiji outer market', 'Tamagoyaki and uni for breakfast', 0, 1),
  (2, 1, 'Ramen in Shinjuku', 'Fuunji, tsukemen', 0, 0),
  (3, 0, 'Eiffel Tower at sunset', 'Summit tickets for 21:00', 1, 1),
  (3, 1, 'Musée d''Orsay', 'Impressionists, 5th floor', 0, 1),
  (3, 2, 'Seine river cruise', '', 1, 0),
  (5, 0, 'Ramen in Shinjuku', 'Fuunji, tsukemen; go before 11:00', 0, 1),
  (5, 1, 'Depachika at Isetan', 'Basement food hall', 0, 0),
  (6, 0, 'Tram 28', 'Board at Martim Moniz', 0, 1),
  (6, 1, 'Pastéis de Belém', '', 0, 1),
  (7, 0, 'Aurora safari', 'Minibus from the harbour at 18:00', 1, 1);

INSERT INTO "living_accommodations" ("trip_id", "address", "placeName") VALUES
  (1, '12 Rue de Rivoli, 75004 Paris', 'Hôtel du Marais'),
  (2, '1-1-1 Shibuya, Tokyo', 'Shibuya Stream Excel Hotel'),
  (4, 'Località Passo Falzarego', 'Rifugio Lagazuoi'),
  (5, '3-7-1-2 Nishi-Shinjuku, Tokyo', 'Park Hyatt Tokyo');

-- The app deleted the Northern Lights trip; the nullify rule left its bucket-list item behind.
DELETE FROM "trips" WHERE "id" = 7;

PRAGMA user_version = 1;
COMMIT;
