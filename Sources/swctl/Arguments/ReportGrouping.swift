/// `report --by`: totals per name, or per local day and name.
package enum ReportGrouping: String, CaseIterable, Sendable {
    case name, day
}
