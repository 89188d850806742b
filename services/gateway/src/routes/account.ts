import { PAGE_SIZE } from "@hb/platform/paging";
import { accountBalanceJson, accountJson } from "../mappers/account.ts";
import { accountUsageJson } from "../mappers/account-usage.ts";
import { required } from "../mappers/contract.ts";
import { transactionJson } from "../mappers/transaction.ts";
import { route } from "../route.ts";
import { pageQuery, pagination } from "../schemas.ts";
import {
  account,
  accountBalance,
  accountBalanceExample,
  accountExample,
  accountUsage,
  accountUsageExample,
} from "../wire/account.ts";
import { transactionList, transactionListExample } from "../wire/transaction.ts";

const viewBilling = ["view_billing"] as const;

export const accountRoutes = [
  route({
    method: "get",
    path: "/account",
    tag: "Account",
    summary: "Profile, company, country, currency, credit balance and permissions in force",
    auth: { scope: "read", permissions: [...viewBilling] },
    response: account,
    example: accountExample,
    handler: async ({ clients, caller, principal }) => {
      const [person, credit] = await Promise.all([
        clients.auth.getPerson({ personId: principal.personId }),
        clients.billing.getAccount({ caller }),
      ]);
      return { data: accountJson(person, credit, principal.permissions) };
    },
  }),
  route({
    method: "get",
    path: "/account/balance",
    tag: "Account",
    summary: "Credit balance and currency",
    auth: { scope: "read", permissions: [...viewBilling] },
    response: accountBalance,
    example: accountBalanceExample,
    handler: async ({ clients, caller, principal }) => {
      const [credit, { customer }] = await Promise.all([
        clients.billing.getAccount({ caller }),
        clients.auth.getPerson({ personId: principal.personId }),
      ]);
      return { data: accountBalanceJson(credit, customer!.currency) };
    },
  }),
  route({
    method: "get",
    path: "/account/usage",
    tag: "Account",
    summary:
      "Service counts, recurring monthly amount, unpaid invoices, paid and hourly charges this month, balance",
    auth: { scope: "read", permissions: [...viewBilling] },
    response: accountUsage,
    example: accountUsageExample,
    handler: async ({ clients, caller }) => ({
      data: accountUsageJson(required((await clients.billing.getUsage({ caller })).usage, "usage")),
    }),
  }),
  route({
    method: "get",
    path: "/account/transactions",
    tag: "Account",
    summary: "Credit ledger, newest first (pagination inside data)",
    auth: { scope: "read", permissions: [...viewBilling] },
    query: pageQuery(PAGE_SIZE.default),
    response: transactionList,
    example: transactionListExample,
    handler: async ({ clients, caller, query }) => {
      const list = await clients.billing.listTransactions({ caller, page: query.page, limit: query.limit });
      return {
        data: {
          transactions: list.transactions.map(transactionJson),
          pagination: pagination(query.page, query.limit, list.total),
        },
      };
    },
  }),
];
