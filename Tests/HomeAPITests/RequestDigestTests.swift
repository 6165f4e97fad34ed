import Crypto
import Testing

@testable import HomeAPI

@Suite struct RequestDigestTests {
    /// Aumasson and Bernstein's `vectors_sip128`: key 00 01 ... 0f, the message 00 01 ... of each
    /// length.
    @Test(arguments: [
        (0, "a3817f04ba25a8e66df67214c7550293"),
        (1, "da87c1d86b99af44347659119b22fc45"),
        (7, "a1f1ebbed8dbc153c0b84aa61ff08239"),
        (8, "3b62a9ba6258f5610f83e264f31497b4"),
        (15, "5493e99933b0a8117e08ec0f97cfc3d9"),
        (63, "5150d1772f50834a503e069a973fbd7c"),
    ])
    func sipHashMatchesTheReferenceVectors(length: Int, expected: String) {
        var hasher = SipHasher128(key: (0x0706_0504_0302_0100, 0x0f0e_0d0c_0b0a_0908))
        let message = (0..<UInt8(length)).map { $0 }
        // In two pieces, the first not a whole number of words, as a method and a request come.
        let split = length / 3
        let first = message[..<split]
        let second = message[split...]
        hasher.append(first.span)
        hasher.append(second.span)
        let hex = hasher.finalize().map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
        #expect(hex == expected)
    }

    @Test func aDigestTellsMethodsAndRequestsApart() {
        let request: ArraySlice<UInt8> = [0x0a, 0x02, 0x10, 0x32]
        let digest = RequestDigest.of("home.v1.HomeService/AddRoom", request)
        #expect(digest.count == RequestDigest.byteCount)
        #expect(RequestDigest.matches(digest, "home.v1.HomeService/AddRoom", request))
        #expect(!RequestDigest.matches(digest, "home.v1.HomeService/RemoveRoom", request))
        #expect(!RequestDigest.matches(digest, "home.v1.HomeService/AddRoom", request.dropLast()))
        // The method and the request are separated: moving a byte across the boundary changes it.
        #expect(RequestDigest.of("a", [0x62]) != RequestDigest.of("ab", []))
    }

    /// Records made before the digest was SipHash's carry SHA-256 of the same bytes: a retry under
    /// their key still matches.
    @Test func aSHA256DigestOfEarlierRecordsStillMatches() {
        let method = "home.v1.HomeService/UpdateActionTargetValue"
        let request: ArraySlice<UInt8> = [0x0a, 0x10, 1, 2, 3]
        var sha = SHA256()
        sha.update(data: Array(method.utf8) + [0] + Array(request))
        let legacy = Array(sha.finalize())
        #expect(RequestDigest.matches(legacy, method, request))
        #expect(!RequestDigest.matches(legacy, method, request.dropFirst()))
    }
}
