/**
 * A posted HTML form (`application/x-www-form-urlencoded`), read with URLSearchParams into a
 * Map: a field named `__proto__` or `constructor` is a field like any other, and a repeated
 * field is seen as repeated, never merged or dropped. Each form says which fields it takes;
 * another field, or one sent more than once where one is expected, is 400 `bad_request`.
 */
import { AppError } from '../errors.js';

export class Form {
  readonly #fields = new Map<string, string[]>();

  /** A form from its urlencoded text (the empty text: no fields). */
  static parse(text: string): Form {
    const form = new Form();
    for (const [name, value] of new URLSearchParams(text)) {
      const values = form.#fields.get(name);
      if (values) values.push(value);
      else form.#fields.set(name, [value]);
    }
    return form;
  }

  /** Refuses a field outside `allowed`. */
  only(...allowed: string[]): this {
    for (const name of this.#fields.keys()) {
      if (!allowed.includes(name)) throw new AppError('bad_parameter', `unknown form field ${JSON.stringify(name.slice(0, 100))}`);
    }
    return this;
  }

  /** The field's value; undefined when absent; 400 when sent more than once. */
  one(name: string): string | undefined {
    const values = this.#fields.get(name);
    if (values && values.length > 1) throw new AppError('bad_parameter', `${name}: sent more than once; send it once`);
    return values?.[0];
  }

  /** Every value of a field (checkboxes of one name), in the order sent. */
  all(name: string): string[] {
    return [...(this.#fields.get(name) ?? [])];
  }
}
