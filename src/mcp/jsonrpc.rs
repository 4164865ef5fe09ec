//! JSON-RPC 2.0 envelope types. (To be written: see the MCP layer task.)
