/// Every stored service, decoded in creation order on a thread of its own while ``StoreLoader``
/// reads the other tables, with the one copy of each type string they share.
struct LoadedServices: Sendable {
    var services: [Service]
    /// Becomes the store's interner: no other object interns before the services are placed.
    var strings: StringInterner

    /// Reads the service table through `reader`.
    static func read(from reader: any TableReader) throws(StoreError) -> LoadedServices {
        var strings = StringInterner()
        let services = try StoreLoader.decodedInCreationOrder(
            StoreSchema.service,
            from: reader,
            { (row) throws(StoreError) in try RowCoding.service(row, intern: { strings.intern($0) }) },
            sequence: { $0.sequence }
        )
        return LoadedServices(services: services, strings: strings)
    }
}
