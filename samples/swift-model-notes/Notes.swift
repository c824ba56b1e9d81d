// A notes app as most SwiftData apps are written: @Model classes and no VersionedSchema.
// tripconv reads it as one model with no versions (README, "Source without a VersionedSchema").
import SwiftData
import SwiftUI

@Model
final class Folder {
    @Attribute(.unique) var title: String
    var colour: String?
    @Relationship(deleteRule: .cascade, inverse: \Note.folder) var notes: [Note] = []

    init(title: String) { self.title = title }
}

@Model
final class Note {
    var text: String
    var pinned: Bool = false
    var created: Date
    var folder: Folder?

    init(text: String, created: Date) { self.text = text; self.created = created }
}

struct NotesList: View {
    @Query(sort: \Note.created) private var notes: [Note]
    var body: some View { List(notes) { Text($0.text) } }
}
