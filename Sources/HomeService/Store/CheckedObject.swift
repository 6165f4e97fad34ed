/// An object found in the home a request named, with the caller's role there: what
/// ``HomeStore/checkObject(_:isIn:as:)`` established, handed to a mutation that follows at once so
/// that it need not look the object and the caller's membership up again.
///
/// Not copyable, so that it is not kept or passed around: it holds only for the change made in the
/// same turn of the loop, before anything else can move the object or the member.
public struct CheckedObject<Kind: HomeScopedKind>: ~Copyable {
    let id: ID<Kind>
    let home: HomeID
    let role: HomeRole
}
