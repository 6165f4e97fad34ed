/// Service groups.
extension HomeStore {
    public func addServiceGroup(
        named name: String,
        to homeID: HomeID,
        as account: AccountID
    ) throws(HomeServiceError) -> ServiceGroup {
        try checkAcceptingChanges()
        let home = try home(homeID, for: account, .addServiceGroup)
        try checkNewName(name, kind: "service group", in: home)
        let group = ServiceGroup(id: .random(), home: homeID, name: name, services: [], sequence: nextSequenceNumber())
        serviceGroups[group.id] = group
        homes[homeID]!.serviceGroups.append(group.id)
        index(name, kind: "service group", id: group.id.raw, in: homeID)
        touch(.serviceGroup(group.id))
        emit(ChangeEvent(.serviceGroupAdded, object: group.id.raw, name: name), in: homeID, by: .account(account))
        submitPending()
        return group
    }

    public func removeServiceGroup(_ id: ServiceGroupID, as account: AccountID) throws(HomeServiceError) {
        try checkAcceptingChanges()
        let (group, home) = try serviceGroup(id, for: account, .removeServiceGroup)
        serviceGroups[id] = nil
        homes[home.id]!.serviceGroups.removeAll { $0 == id }
        unindex(group.name, in: home.id)
        touch(.serviceGroup(id))
        emit(ChangeEvent(.serviceGroupRemoved, object: id.raw), in: home.id, by: .account(account))
        submitPending()
    }

    public func renameServiceGroup(
        _ id: ServiceGroupID,
        to name: String,
        as account: AccountID
    ) throws(HomeServiceError) {
        try checkAcceptingChanges()
        let (group, home) = try serviceGroup(id, for: account, .renameServiceGroup)
        try checkRename(of: id.raw, from: group.name, to: name, kind: "service group", in: home)
        serviceGroups[id]!.name = name
        reindex(from: group.name, to: name, kind: "service group", id: id.raw, in: home.id)
        touch(.serviceGroup(id))
        emit(ChangeEvent(.serviceGroupNameUpdated, object: id.raw, name: name), in: home.id, by: .account(account))
        submitPending()
    }

    /// - Throws: 2 for a service of another home; 1 if it is already in the group.
    public func addService(
        _ serviceID: ServiceID,
        toGroup id: ServiceGroupID,
        as account: AccountID
    )
        throws(HomeServiceError)
    {
        try checkAcceptingChanges()
        let (group, home) = try serviceGroup(id, for: account, .addServiceToGroup)
        let service = try sameHome(serviceID, in: services, kind: "service", home: \.home, as: home)
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
        submitPending()
    }

    /// - Throws: 2 if the service is not in the group.
    public func removeService(
        _ serviceID: ServiceID,
        fromGroup id: ServiceGroupID,
        as account: AccountID
    )
        throws(HomeServiceError)
    {
        try checkAcceptingChanges()
        let (group, home) = try serviceGroup(id, for: account, .removeServiceFromGroup)
        guard group.services.contains(serviceID) else {
            throw HomeServiceError(.notFound, "service \(serviceID) is not in group \"\(group.name)\"")
        }
        removeFromGroup(serviceID, group: id, home: home.id, by: .account(account))
        submitPending()
    }

    func removeFromGroup(_ serviceID: ServiceID, group id: ServiceGroupID, home: HomeID, by initiator: Initiator) {
        serviceGroups[id]!.services.removeAll { $0 == serviceID }
        touch(.serviceGroup(id))
        emit(ChangeEvent(.serviceRemovedFromGroup, object: serviceID.raw, container: id.raw), in: home, by: initiator)
    }
}
