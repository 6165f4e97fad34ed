/// Service groups.
extension HomeStore {
    public func addServiceGroup(
        named name: String,
        to homeID: HomeID,
        as account: AccountID
    ) throws(HomeServiceError) -> ServiceGroup {
        try beginMutation()
        defer { endMutation() }
        _ = try homeForAdding(name, NamedKinds.serviceGroup, to: homeID, as: account)
        let group = ServiceGroup(id: .random(), home: homeID, name: name, services: [], sequence: nextSequenceNumber())
        insert(group, NamedKinds.serviceGroup, announcedBy: account)
        return group
    }

    public func removeServiceGroup(_ id: ServiceGroupID, as account: AccountID) throws(HomeServiceError) {
        try remove(id, NamedKinds.serviceGroup, as: account)
    }

    public func renameServiceGroup(
        _ id: ServiceGroupID,
        to name: String,
        as account: AccountID
    ) throws(HomeServiceError) {
        try rename(id, NamedKinds.serviceGroup, to: name, as: account)
    }

    /// - Throws: 2 for a service of another home; 1 if it is already in the group.
    public func addService(
        _ serviceID: ServiceID,
        toGroup id: ServiceGroupID,
        as account: AccountID
    )
        throws(HomeServiceError)
    {
        try beginMutation()
        defer { endMutation() }
        let (group, home) = try lookup(id, NamedKinds.serviceGroup, for: account, .addServiceToGroup)
        let service = try sameHome(serviceID, in: services, kind: "service", home: \.home, as: home.id, for: account)
        guard !group.services.contains(serviceID) else {
            throw HomeServiceError(.alreadyExists, "service \"\(service.name)\" is already in group \"\(group.name)\"")
        }
        serviceGroups[id]!.services.append(serviceID)
        touch(.serviceGroup(id))
        emit(
            ChangeEvent(.serviceAddedToGroup, object: serviceID.raw, container: id.raw),
            in: home.id,
            by: .account(account)
        )
    }

    /// - Throws: 2 if the service is not in the group.
    public func removeService(
        _ serviceID: ServiceID,
        fromGroup id: ServiceGroupID,
        as account: AccountID
    )
        throws(HomeServiceError)
    {
        try beginMutation()
        defer { endMutation() }
        let (group, home) = try lookup(id, NamedKinds.serviceGroup, for: account, .removeServiceFromGroup)
        guard group.services.contains(serviceID) else {
            throw HomeServiceError(.notFound, "service \(serviceID) is not in group \"\(group.name)\"")
        }
        removeFromGroup(serviceID, group: id, home: home.id, by: .account(account))
    }

    func removeFromGroup(_ serviceID: ServiceID, group id: ServiceGroupID, home: HomeID, by initiator: Initiator) {
        serviceGroups[id]!.services.removeAll { $0 == serviceID }
        touch(.serviceGroup(id))
        emit(ChangeEvent(.serviceRemovedFromGroup, object: serviceID.raw, container: id.raw), in: home, by: initiator)
    }
}
