/**
 * The part of etcd's v3 gRPC API that Conclave speaks, as a protobuf schema: KV, Watch, Lease,
 * Cluster (member list), Maintenance (status, move leader) and Auth (authenticate, and the few
 * calls tests and benchmarks use to turn auth on).
 *
 * Written for Conclave from etcd's published API reference (api-reference-v3): the service and
 * method names and the field numbers and types are the wire contract, so they match etcd 3.4+;
 * messages and fields Conclave never sends or reads are left out (protobuf skips unknown fields,
 * so answers carrying more still decode). Everything lives in one package because only the
 * service path (`/etcdserverpb.KV/Range`) and the field numbers go on the wire.
 */
export const ETCD_SCHEMA = `
syntax = "proto3";
package etcdserverpb;

message ResponseHeader {
  uint64 cluster_id = 1;
  uint64 member_id = 2;
  int64 revision = 3;
  uint64 raft_term = 4;
}

message KeyValue {
  bytes key = 1;
  int64 create_revision = 2;
  int64 mod_revision = 3;
  int64 version = 4;
  bytes value = 5;
  int64 lease = 6;
}

message Event {
  enum EventType { PUT = 0; DELETE = 1; }
  EventType type = 1;
  KeyValue kv = 2;
  KeyValue prev_kv = 3;
}

message RangeRequest {
  enum SortOrder { NONE = 0; ASCEND = 1; DESCEND = 2; }
  enum SortTarget { KEY = 0; VERSION = 1; CREATE = 2; MOD = 3; VALUE = 4; }
  bytes key = 1;
  bytes range_end = 2;
  int64 limit = 3;
  int64 revision = 4;
  SortOrder sort_order = 5;
  SortTarget sort_target = 6;
  bool serializable = 7;
  bool keys_only = 8;
  bool count_only = 9;
}
message RangeResponse {
  ResponseHeader header = 1;
  repeated KeyValue kvs = 2;
  bool more = 3;
  int64 count = 4;
}

message PutRequest {
  bytes key = 1;
  bytes value = 2;
  int64 lease = 3;
  bool prev_kv = 4;
  bool ignore_value = 5;
  bool ignore_lease = 6;
}
message PutResponse {
  ResponseHeader header = 1;
  KeyValue prev_kv = 2;
}

message DeleteRangeRequest {
  bytes key = 1;
  bytes range_end = 2;
  bool prev_kv = 3;
}
message DeleteRangeResponse {
  ResponseHeader header = 1;
  int64 deleted = 2;
  repeated KeyValue prev_kvs = 3;
}

message RequestOp {
  oneof request {
    RangeRequest request_range = 1;
    PutRequest request_put = 2;
    DeleteRangeRequest request_delete_range = 3;
    TxnRequest request_txn = 4;
  }
}
message ResponseOp {
  oneof response {
    RangeResponse response_range = 1;
    PutResponse response_put = 2;
    DeleteRangeResponse response_delete_range = 3;
    TxnResponse response_txn = 4;
  }
}
message Compare {
  enum CompareResult { EQUAL = 0; GREATER = 1; LESS = 2; NOT_EQUAL = 3; }
  enum CompareTarget { VERSION = 0; CREATE = 1; MOD = 2; VALUE = 3; LEASE = 4; }
  CompareResult result = 1;
  CompareTarget target = 2;
  bytes key = 3;
  oneof target_union {
    int64 version = 4;
    int64 create_revision = 5;
    int64 mod_revision = 6;
    bytes value = 7;
    int64 lease = 8;
  }
  bytes range_end = 64;
}
message TxnRequest {
  repeated Compare compare = 1;
  repeated RequestOp success = 2;
  repeated RequestOp failure = 3;
}
message TxnResponse {
  ResponseHeader header = 1;
  bool succeeded = 2;
  repeated ResponseOp responses = 3;
}

message CompactionRequest {
  int64 revision = 1;
  bool physical = 2;
}
message CompactionResponse { ResponseHeader header = 1; }

message WatchRequest {
  oneof request_union {
    WatchCreateRequest create_request = 1;
    WatchCancelRequest cancel_request = 2;
    WatchProgressRequest progress_request = 3;
  }
}
message WatchCreateRequest {
  enum FilterType { NOPUT = 0; NODELETE = 1; }
  bytes key = 1;
  bytes range_end = 2;
  int64 start_revision = 3;
  bool progress_notify = 4;
  repeated FilterType filters = 5;
  bool prev_kv = 6;
  int64 watch_id = 7;
  bool fragment = 8;
}
message WatchCancelRequest { int64 watch_id = 1; }
message WatchProgressRequest {}
message WatchResponse {
  ResponseHeader header = 1;
  int64 watch_id = 2;
  bool created = 3;
  bool canceled = 4;
  int64 compact_revision = 5;
  string cancel_reason = 6;
  bool fragment = 7;
  repeated Event events = 11;
}

message LeaseGrantRequest { int64 TTL = 1; int64 ID = 2; }
message LeaseGrantResponse {
  ResponseHeader header = 1; int64 ID = 2; int64 TTL = 3; string error = 4;
}
message LeaseRevokeRequest { int64 ID = 1; }
message LeaseRevokeResponse { ResponseHeader header = 1; }
message LeaseKeepAliveRequest { int64 ID = 1; }
message LeaseKeepAliveResponse { ResponseHeader header = 1; int64 ID = 2; int64 TTL = 3; }
message LeaseTimeToLiveRequest { int64 ID = 1; bool keys = 2; }
message LeaseTimeToLiveResponse {
  ResponseHeader header = 1;
  int64 ID = 2;
  int64 TTL = 3;
  int64 grantedTTL = 4;
  repeated bytes keys = 5;
}
message LeaseLeasesRequest {}
message LeaseStatus { int64 ID = 1; }
message LeaseLeasesResponse { ResponseHeader header = 1; repeated LeaseStatus leases = 2; }

message Member {
  uint64 ID = 1;
  string name = 2;
  repeated string peerURLs = 3;
  repeated string clientURLs = 4;
  bool isLearner = 5;
}
message MemberListRequest {}
message MemberListResponse { ResponseHeader header = 1; repeated Member members = 2; }

message StatusRequest {}
message StatusResponse {
  ResponseHeader header = 1;
  string version = 2;
  int64 dbSize = 3;
  uint64 leader = 4;
  uint64 raftIndex = 5;
  uint64 raftTerm = 6;
  uint64 raftAppliedIndex = 7;
  repeated string errors = 8;
  int64 dbSizeInUse = 9;
  bool isLearner = 10;
}
message MoveLeaderRequest { uint64 targetID = 1; }
message MoveLeaderResponse { ResponseHeader header = 1; }

message AuthenticateRequest { string name = 1; string password = 2; }
message AuthenticateResponse { ResponseHeader header = 1; string token = 2; }
message AuthEnableRequest {}
message AuthEnableResponse { ResponseHeader header = 1; }
message UserAddOptions { bool no_password = 1; }
message AuthUserAddRequest { string name = 1; string password = 2; UserAddOptions options = 3; }
message AuthUserAddResponse { ResponseHeader header = 1; }
message AuthRoleAddRequest { string name = 1; }
message AuthRoleAddResponse { ResponseHeader header = 1; }
message AuthUserGrantRoleRequest { string user = 1; string role = 2; }
message AuthUserGrantRoleResponse { ResponseHeader header = 1; }
message Permission {
  enum Type { READ = 0; WRITE = 1; READWRITE = 2; }
  Type permType = 1;
  bytes key = 2;
  bytes range_end = 3;
}
message AuthRoleGrantPermissionRequest { string name = 1; Permission perm = 2; }
message AuthRoleGrantPermissionResponse { ResponseHeader header = 1; }
`;

/** Each method Conclave calls: its service, and its request and answer message names. */
export const ETCD_METHODS = {
  range: { service: 'KV', method: 'Range', request: 'RangeRequest', answer: 'RangeResponse' },
  put: { service: 'KV', method: 'Put', request: 'PutRequest', answer: 'PutResponse' },
  deleteRange: { service: 'KV', method: 'DeleteRange', request: 'DeleteRangeRequest',
    answer: 'DeleteRangeResponse' },
  txn: { service: 'KV', method: 'Txn', request: 'TxnRequest', answer: 'TxnResponse' },
  compact: { service: 'KV', method: 'Compact', request: 'CompactionRequest',
    answer: 'CompactionResponse' },
  leaseGrant: { service: 'Lease', method: 'LeaseGrant', request: 'LeaseGrantRequest',
    answer: 'LeaseGrantResponse' },
  leaseRevoke: { service: 'Lease', method: 'LeaseRevoke', request: 'LeaseRevokeRequest',
    answer: 'LeaseRevokeResponse' },
  leaseTimeToLive: { service: 'Lease', method: 'LeaseTimeToLive',
    request: 'LeaseTimeToLiveRequest', answer: 'LeaseTimeToLiveResponse' },
  leaseLeases: { service: 'Lease', method: 'LeaseLeases', request: 'LeaseLeasesRequest',
    answer: 'LeaseLeasesResponse' },
  memberList: { service: 'Cluster', method: 'MemberList', request: 'MemberListRequest',
    answer: 'MemberListResponse' },
  status: { service: 'Maintenance', method: 'Status', request: 'StatusRequest',
    answer: 'StatusResponse' },
  moveLeader: { service: 'Maintenance', method: 'MoveLeader', request: 'MoveLeaderRequest',
    answer: 'MoveLeaderResponse' },
  authenticate: { service: 'Auth', method: 'Authenticate', request: 'AuthenticateRequest',
    answer: 'AuthenticateResponse' },
  authEnable: { service: 'Auth', method: 'AuthEnable', request: 'AuthEnableRequest',
    answer: 'AuthEnableResponse' },
  userAdd: { service: 'Auth', method: 'UserAdd', request: 'AuthUserAddRequest',
    answer: 'AuthUserAddResponse' },
  roleAdd: { service: 'Auth', method: 'RoleAdd', request: 'AuthRoleAddRequest',
    answer: 'AuthRoleAddResponse' },
  userGrantRole: { service: 'Auth', method: 'UserGrantRole', request: 'AuthUserGrantRoleRequest',
    answer: 'AuthUserGrantRoleResponse' },
  roleGrantPermission: { service: 'Auth', method: 'RoleGrantPermission',
    request: 'AuthRoleGrantPermissionRequest', answer: 'AuthRoleGrantPermissionResponse' },
} as const;

/** The two bidirectional streams. */
export const ETCD_STREAMS = {
  watch: { service: 'Watch', method: 'Watch', request: 'WatchRequest', answer: 'WatchResponse' },
  leaseKeepAlive: { service: 'Lease', method: 'LeaseKeepAlive', request: 'LeaseKeepAliveRequest',
    answer: 'LeaseKeepAliveResponse' },
} as const;

export type EtcdUnaryName = keyof typeof ETCD_METHODS;
export type EtcdStreamName = keyof typeof ETCD_STREAMS;
