// Values under two keys, for rules that look for a key met more than once (two servers sharing
// an audience). Almost every key is met once, so only the first value is stored; a list is made
// for the rare key met again. What it holds lives until the end of a run.

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

  /** The values of every key added more than once. */
  repeats(): readonly (readonly V[])[] {
    return this.groups;
  }
}
