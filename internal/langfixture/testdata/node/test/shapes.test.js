'use strict';

const test = require('node:test');
const assert = require('node:assert');
const { area } = require('../src/area');
const { double } = require('../src/double');

test('area', () => {
  assert.strictEqual(area(2, 3), 6);
});

test('double', () => {
  assert.strictEqual(double(2, 3), 13);
});
