public import HomeProto

// The model values the SDK returns: the protocol's messages, which are Swift value types.
public typealias Home = Home_V1_Home
public typealias Room = Home_V1_Room
public typealias Zone = Home_V1_Zone
public typealias Accessory = Home_V1_Accessory
public typealias Service = Home_V1_Service
public typealias Characteristic = Home_V1_Characteristic
public typealias CharacteristicValue = Home_V1_CharacteristicValue
public typealias ServiceGroup = Home_V1_ServiceGroup
public typealias ActionSet = Home_V1_ActionSet
public typealias CharacteristicWriteAction = Home_V1_CharacteristicWriteAction
public typealias TimerTrigger = Home_V1_TimerTrigger
public typealias Recurrence = Home_V1_Recurrence
public typealias User = Home_V1_User
public typealias Account = Home_V1_Account
public typealias TokenInfo = Home_V1_TokenInfo
public typealias AccessoryDescription = Home_V1_AccessoryDescription

extension CharacteristicValue {
    public static func bool(_ value: Bool) -> CharacteristicValue {
        var message = CharacteristicValue()
        message.boolValue = value
        return message
    }

    public static func int(_ value: Int64) -> CharacteristicValue {
        var message = CharacteristicValue()
        message.signedValue = value
        return message
    }

    public static func float(_ value: Double) -> CharacteristicValue {
        var message = CharacteristicValue()
        message.floatValue = value
        return message
    }

    public static func string(_ value: String) -> CharacteristicValue {
        var message = CharacteristicValue()
        message.stringValue = value
        return message
    }
}

extension Recurrence {
    /// `count` units (minutes, hours, days or weeks) of the home's calendar.
    public init(_ count: Int64, _ unit: Unit) {
        self.init()
        self.count = count
        self.unit = unit
    }
}
