/// Defaults given on the command line (`--default Entity.attribute=VALUE`) for attributes whose
/// default the source cannot give: one computed when an object is made (`TimeZone.current.identifier`,
/// `Date()`), which SwiftData evaluates once on the device when it migrates, and tripconv cannot.
///
/// ```swift
/// let plan = try ModelPlan.read(...).givingDefaults(["UserProfile.timezone": "Europe/Paris"])
/// ```
extension ModelPlan {
    /// `Entity.attribute=VALUE` split at its first `=` and the dot before it; nil when it has neither.
    public static func defaultAssignment(_ text: String) -> (entity: String, attribute: String, value: String)? {
        guard let equals = text.firstIndex(of: "=") else { return nil }
        let name = text[..<equals]
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex, name.index(after: dot) != name.endIndex else { return nil }
        return (String(name[..<dot]), String(name[name.index(after: dot)...]), String(text[text.index(after: equals)...]))
    }

    /// This plan with each `Entity.attribute` of `values` given VALUE as its default in every version
    /// that declares it (replacing the source's); VALUE is read as the attribute's kind, as an export's
    /// text is (a Date as ISO 8601, Data as base64). A name no version declares, or a value that is no
    /// value of its kind, is a usage error (64) naming the option.
    public func givingDefaults(_ values: [(entity: String, attribute: String, value: String)]) throws -> ModelPlan {
        var plan = self
        for given in values {
            var found = false
            for v in plan.versions.indices {
                for e in plan.versions[v].entities.indices where plan.versions[v].entities[e].name == given.entity {
                    for a in plan.versions[v].entities[e].attributes.indices where plan.versions[v].entities[e].attributes[a].name == given.attribute {
                        let kind = plan.versions[v].entities[e].attributes[a].kind
                        guard let value = ObjectValueText.value(given.value, kind: kind) else {
                            throw TripError.usage("--default \(given.entity).\(given.attribute)=\(given.value): expected a value of its kind, \(kind), "
                                                  + "found \(ObjectMigration.quoted(.string(given.value)))")
                        }
                        plan.versions[v].entities[e].attributes[a].defaultValue = value
                        found = true
                    }
                }
            }
            if !found {
                throw TripError.usage("--default \(given.entity).\(given.attribute): no version of the plan declares the attribute \(given.attribute) "
                                      + "of an entity \(given.entity)")
            }
        }
        return plan
    }
}
