// Values under two keys, for rules that look for a key met more than once (a duplicate name,
// two servers sharing an audience) and for lookups by those keys. Almost every key is met once,
// so only the first value is stored; a list is made for the rare key met again. This runs for
// every resource, and what it holds lives until the end of a run.

export class Grouping<V> {
  private readonly first = new Map<string, Map<string, V>>();
  private readonly repeated = new Map<string, Map<string, V[]>>();
  /** The lists of repeated keys, in the order they became repeated. */
  private readonly groups: V[][] = [];

  /** Adds `value` under (k1, k2). */
  add(k1: string, k2: string, value: V): void {
    let byK2 = this.first.get(k1);
    if (byK2 === undefined) {
      byK2 = new Map<string, V>();
      this.first.set(k1, byK2);
    }
    const first = byK2.get(k2);
    if (first === undefined) {
      byK2.set(k2, value);
      return;
    }
    let lists = this.repeated.get(k1);
    if (lists === undefined) {
      lists = new Map<string, V[]>();
      this.repeated.set(k1, lists);
    }
    const list = lists.get(k2);
    if (list !== undefined) {
      list.push(value);
      return;
    }
    const created = [first, value];
    lists.set(k2, created);
    this.groups.push(created);
  }

  /**
   * Adds `value` under (k1, k2) when nothing is there yet and returns undefined; else adds
   * nothing and returns the first value there (the caller decides whether to add()).
   */
  addIfFirst(k1: string, k2: string, value: V): V | undefined {
    let byK2 = this.first.get(k1);
    if (byK2 === undefined) {
      byK2 = new Map<string, V>();
      this.first.set(k1, byK2);
    }
    const first = byK2.get(k2);
    if (first === undefined) byK2.set(k2, value);
    return first;
  }

  /** The first value added under (k1, k2). */
  get(k1: string, k2: string): V | undefined {
    return this.first.get(k1)?.get(k2);
  }

  /** The values of every key added more than once. */
  repeats(): readonly (readonly V[])[] {
    return this.groups;
  }
}
