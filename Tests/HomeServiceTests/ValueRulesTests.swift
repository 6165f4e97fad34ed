import Foundation
import Testing

@testable import HomeService

/// Values against real catalog metadata (HAP-CATALOG.md), at and across every boundary.
@Suite struct ValueRulesTests {
    static let brightness = CharacteristicMetadata(
        format: .int,
        units: "percentage",
        minimumValue: 0,
        maximumValue: 100,
        stepValue: 1
    )
    static let targetTemperature = CharacteristicMetadata(
        format: .float,
        units: "celsius",
        minimumValue: 10,
        maximumValue: 38,
        stepValue: 0.1
    )
    static let lockTargetState = CharacteristicMetadata(
        format: .uint8,
        minimumValue: 0,
        maximumValue: 1,
        stepValue: 1,
        validValues: [0, 1]
    )
    static let name = CharacteristicMetadata(format: .string, maxLength: 64)
    static let on = CharacteristicMetadata(format: .bool)
    static let hue = CharacteristicMetadata(
        format: .float,
        units: "arcdegrees",
        minimumValue: 0,
        maximumValue: 360,
        stepValue: 1
    )
    static let uint64 = CharacteristicMetadata(format: .uint64)
    static let tenths = CharacteristicMetadata(format: .float, minimumValue: 0, maximumValue: 1, stepValue: 0.1)

    struct Case: Sendable, CustomTestStringConvertible {
        var label: String
        var metadata: CharacteristicMetadata
        var value: CharacteristicValue
        /// `nil` when the value is accepted.
        var code: HomeKitErrorCode?
        var testDescription: String { "\(label) = \(value) → \(code.map { "\($0.rawValue)" } ?? "ok")" }
    }

    static let cases: [Case] = [
        // Brightness: int 0...100 step 1.
        Case(label: "Brightness", metadata: brightness, value: .int(0), code: nil),
        Case(label: "Brightness", metadata: brightness, value: .int(100), code: nil),
        Case(label: "Brightness", metadata: brightness, value: .int(-1), code: .valueLowerThanMinimum),
        Case(label: "Brightness", metadata: brightness, value: .int(101), code: .valueHigherThanMaximum),
        Case(
            label: "Brightness",
            metadata: brightness,
            value: .int(Int64(Int32.max) + 1),
            code: .valueHigherThanMaximum
        ),
        Case(label: "Brightness", metadata: brightness, value: .float(50), code: .invalidValueType),
        Case(label: "Brightness", metadata: brightness, value: .string("50"), code: .invalidValueType),
        // Target Temperature: float 10...38 step 0.1.
        Case(label: "Target Temperature", metadata: targetTemperature, value: .float(10), code: nil),
        Case(label: "Target Temperature", metadata: targetTemperature, value: .float(38), code: nil),
        Case(label: "Target Temperature", metadata: targetTemperature, value: .float(21.5), code: nil),
        Case(label: "Target Temperature", metadata: targetTemperature, value: .float(21.3), code: nil),
        Case(label: "Target Temperature", metadata: targetTemperature, value: .int(22), code: nil),
        Case(
            label: "Target Temperature",
            metadata: targetTemperature,
            value: .float(9.9),
            code: .valueLowerThanMinimum
        ),
        Case(
            label: "Target Temperature",
            metadata: targetTemperature,
            value: .float(38.1),
            code: .valueHigherThanMaximum
        ),
        Case(label: "Target Temperature", metadata: targetTemperature, value: .float(21.55), code: .invalidParameter),
        Case(label: "Target Temperature", metadata: targetTemperature, value: .float(.nan), code: .invalidValueType),
        Case(label: "Target Temperature", metadata: targetTemperature, value: .bool(true), code: .invalidValueType),
        // Lock Target State: uint8 with valid values 0 and 1.
        Case(label: "Lock Target State", metadata: lockTargetState, value: .int(1), code: nil),
        Case(label: "Lock Target State", metadata: lockTargetState, value: .int(2), code: .valueHigherThanMaximum),
        Case(label: "Lock Target State", metadata: lockTargetState, value: .int(-1), code: .valueLowerThanMinimum),
        Case(
            label: "Lock Target State",
            metadata: CharacteristicMetadata(format: .uint8, validValues: [0, 1, 3]),
            value: .int(2),
            code: .invalidParameter
        ),
        Case(label: "uint8", metadata: CharacteristicMetadata(format: .uint8), value: .int(255), code: nil),
        Case(
            label: "uint8",
            metadata: CharacteristicMetadata(format: .uint8),
            value: .int(256),
            code: .valueHigherThanMaximum
        ),
        Case(
            label: "int32",
            metadata: CharacteristicMetadata(format: .int),
            value: .int(Int64(Int32.min) - 1),
            code: .valueLowerThanMinimum
        ),
        // Name: string, at most 64 bytes.
        Case(label: "Name", metadata: name, value: .string(String(repeating: "a", count: 64)), code: nil),
        Case(
            label: "Name",
            metadata: name,
            value: .string(String(repeating: "a", count: 65)),
            code: .stringLongerThanMaximum
        ),
        // 22 three-byte characters: 66 bytes though only 22 characters.
        Case(
            label: "Name",
            metadata: name,
            value: .string(String(repeating: "卧", count: 22)),
            code: .stringLongerThanMaximum
        ),
        Case(
            label: "Serial",
            metadata: CharacteristicMetadata(format: .string, maxLength: 1000),
            value: .string(String(repeating: "a", count: 257)),
            code: .stringLongerThanMaximum
        ),
        Case(
            label: "Code",
            metadata: CharacteristicMetadata(format: .string, minLength: 4),
            value: .string("123"),
            code: .stringShorterThanMinimum
        ),
        Case(
            label: "Code",
            metadata: CharacteristicMetadata(format: .string, minLength: 4),
            value: .string("1234"),
            code: nil
        ),
        // On: bool only.
        Case(label: "On", metadata: on, value: .bool(false), code: nil),
        Case(label: "On", metadata: on, value: .int(1), code: .invalidValueType),
        Case(label: "Setup", metadata: CharacteristicMetadata(format: .tlv8), value: .data([1, 2]), code: nil),
        // Unsigned integers past Int64.max: the type comes first, and uint64 takes its whole range.
        Case(label: "On", metadata: on, value: .unsigned(UInt64.max), code: .invalidValueType),
        Case(label: "Counter", metadata: uint64, value: .unsigned(UInt64.max), code: nil),
        Case(label: "Counter", metadata: uint64, value: .unsigned(UInt64(Int64.max) + 1), code: nil),
        Case(label: "Counter", metadata: uint64, value: .int(Int64.max), code: nil),
        Case(label: "Counter", metadata: uint64, value: .int(-1), code: .valueLowerThanMinimum),
        Case(
            label: "Counter",
            metadata: CharacteristicMetadata(format: .uint64, maximumValue: 1e19),
            value: .unsigned(UInt64.max),
            code: .valueHigherThanMaximum
        ),
        Case(
            label: "Counter",
            metadata: CharacteristicMetadata(format: .uint64, validValues: [0, 1]),
            value: .unsigned(UInt64.max),
            code: .invalidParameter
        ),
        Case(
            label: "uint32",
            metadata: CharacteristicMetadata(format: .uint32),
            value: .unsigned(UInt64.max),
            code: .valueHigherThanMaximum
        ),
        Case(
            label: "Reading",
            metadata: CharacteristicMetadata(format: .float),
            value: .unsigned(UInt64.max),
            code: nil
        ),
        // The step grid is exact, as written in the step's decimals: nothing is rounded for the caller.
        Case(label: "Hue", metadata: hue, value: .float(.leastNonzeroMagnitude), code: .invalidParameter),
        Case(label: "Hue", metadata: hue, value: .float(359.9999999999), code: .invalidParameter),
        Case(label: "Hue", metadata: hue, value: .float(-0.0), code: nil),
        Case(label: "Hue", metadata: hue, value: .float(180), code: nil),
        // 0.1 + 0.2 is 0.30000000000000004, not the grid point 0.3.
        Case(label: "Level", metadata: tenths, value: .float(0.1 + 0.2), code: .invalidParameter),
        Case(label: "Level", metadata: tenths, value: .float(0.3), code: nil),
        Case(label: "Target Temperature", metadata: targetTemperature, value: .float(10.3), code: nil),
        Case(label: "Target Temperature", metadata: targetTemperature, value: .float(37.7), code: nil),
        Case(
            label: "Setup",
            metadata: CharacteristicMetadata(format: .tlv8),
            value: .string("x"),
            code: .invalidValueType
        ),
    ]

    @Test(arguments: cases)
    func valueIsCheckedAgainstFormatAndMetadata(testCase: Case) {
        do {
            try ValueRules.validate(testCase.value, against: testCase.metadata, characteristic: testCase.label)
            #expect(testCase.code == nil, "accepted, expected \(String(describing: testCase.code))")
        } catch {
            #expect(error.code == testCase.code)
            #expect(error.message.hasPrefix(testCase.label))
        }
    }

    /// Every point of a decimal grid is taken as a person types it (the decimal, not the binary sum).
    @Test func everyPointOfADecimalGridIsOnIt() {
        let grids = [(0.1, 10.0, 1, 280), (0.5, 0, 1, 200), (0.01, -1, 2, 300), (0.25, 0, 2, 100), (100, 0, 0, 50)]
        for (step, origin, decimals, points) in grids {
            let metadata = CharacteristicMetadata(format: .float, minimumValue: origin, stepValue: step)
            for index in 0...points {
                let typed = Double(String(format: "%.\(decimals)f", origin + Double(index) * step))!
                #expect(throws: Never.self, "\(typed) on \(step) from \(origin)") {
                    try ValueRules.validate(.float(typed), against: metadata, characteristic: "Grid")
                }
            }
        }
    }

    @Test func messagesNameTheCharacteristicValueAndLimit() {
        do {
            try ValueRules.validate(.int(101), against: Self.brightness, characteristic: "Brightness")
        } catch {
            #expect(error.message == "Brightness value 101 is above its maximum 100")
        }
        do {
            try ValueRules.validate(
                .float(21.55),
                against: Self.targetTemperature,
                characteristic: "Target Temperature"
            )
        } catch {
            #expect(error.message == "Target Temperature value 21.55 is not a multiple of its step 0.1 from 10.0")
        }
    }
}
