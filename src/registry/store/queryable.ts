// What runs a statement: a driver's connection or one of its transactions. The lowest module of
// the store, so both the drivers' interface (db.ts) and their dialects can name it.
export interface QueryResult<T> {
  rows: T[];
}

export interface Queryable {
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<QueryResult<T>>;
}
