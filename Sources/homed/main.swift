import ArgumentParser
import HomedCommand

Homed.main()
