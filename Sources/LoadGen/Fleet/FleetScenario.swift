import ArgumentParser
import Foundation

/// The shape and the rates of a fleet run: a preset or a scenario file (JSON with any of these keys;
/// the others keep their defaults), then options on the command line, which override them.
struct FleetScenario: Codable, Equatable {
    var homes = 2
    var accessoriesPerHome = 10
    var controllers = 4
    var reportRate = 100.0
    var readRate = 100.0
    var writeRate = 50.0
    var executeRate = 5.0

    enum CodingKeys: String, CodingKey {
        case homes
        case accessoriesPerHome = "accessories_per_home"
        case controllers
        case reportRate = "report_rate"
        case readRate = "read_rate"
        case writeRate = "write_rate"
        case executeRate = "execute_rate"
    }

    init() {}

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let defaults = FleetScenario()
        homes = try container.decodeIfPresent(Int.self, forKey: .homes) ?? defaults.homes
        accessoriesPerHome =
            try container.decodeIfPresent(Int.self, forKey: .accessoriesPerHome) ?? defaults.accessoriesPerHome
        controllers = try container.decodeIfPresent(Int.self, forKey: .controllers) ?? defaults.controllers
        reportRate = try container.decodeIfPresent(Double.self, forKey: .reportRate) ?? defaults.reportRate
        readRate = try container.decodeIfPresent(Double.self, forKey: .readRate) ?? defaults.readRate
        writeRate = try container.decodeIfPresent(Double.self, forKey: .writeRate) ?? defaults.writeRate
        executeRate = try container.decodeIfPresent(Double.self, forKey: .executeRate) ?? defaults.executeRate
    }

    enum Preset: String, CaseIterable, ExpressibleByArgument {
        case smallHome = "small-home"
        case apartmentBlock = "apartment-block"
        case tenThousandAccessories = "10k-accessories"

        var scenario: FleetScenario {
            var scenario = FleetScenario()
            switch self {
            case .smallHome:
                (scenario.homes, scenario.accessoriesPerHome, scenario.controllers) = (1, 20, 2)
                (scenario.reportRate, scenario.readRate, scenario.writeRate, scenario.executeRate) = (20, 20, 5, 1)
            case .apartmentBlock:
                (scenario.homes, scenario.accessoriesPerHome, scenario.controllers) = (50, 20, 4)
                (scenario.reportRate, scenario.readRate, scenario.writeRate, scenario.executeRate) = (500, 200, 100, 10)
            case .tenThousandAccessories:
                (scenario.homes, scenario.accessoriesPerHome, scenario.controllers) = (50, 200, 4)
                (scenario.reportRate, scenario.readRate, scenario.writeRate, scenario.executeRate) = (
                    5000, 2000, 1000, 50
                )
            }
            return scenario
        }
    }

    /// The rate offered to each kind the fleet measures (notifications follow the reports).
    var ratesByKind: [String: Double] {
        [
            "report": reportRate, "read": readRate, "write": writeRate, "execute": executeRate,
            "notification": reportRate,
        ]
    }

    static func load(_ path: String) throws -> FleetScenario {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ValidationError("cannot read the scenario file \(path)")
        }
        do {
            return try JSONDecoder().decode(FleetScenario.self, from: data)
        } catch {
            throw ValidationError("\(path) is not a fleet scenario: \(error)")
        }
    }

    func validate() throws {
        guard homes > 0, accessoriesPerHome > 0, controllers > 0 else {
            throw ValidationError("homes, accessories per home and controllers must be positive")
        }
        guard reportRate >= 0, readRate >= 0, writeRate >= 0, executeRate >= 0 else {
            throw ValidationError("rates must be >= 0")
        }
    }
}
